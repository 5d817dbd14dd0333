package evidence

import (
	"context"
	"sync"
)

// Chain is one workflow's chain as ReadChains read it: its rows in chain
// order, its head and what to check their authors with.
type Chain struct {
	Rows []*SnapshotRecord

	id   string
	head *chainHead
	auth authorship
	once sync.Once
	rep  VerifyReport
}

// Verify is what Store.Verify reports for the chain. It is worked out on
// the first call, by whoever asks first: the auditor of many runs asks
// from each run's own goroutine, so a batch's chains are verified in
// parallel rather than one after another where they are read
// (docs/performance.md#audit-rate).
func (c *Chain) Verify() VerifyReport {
	c.once.Do(func() {
		c.rep = VerifyReport{WorkflowID: c.id, OK: true}
		verifyChain(&c.rep, c.Rows, c.head, c.auth)
	})
	return c.rep
}

// ReadChains reads the chains of many workflows in two statements (their
// rows, their heads); each Chain.Verify checks one as Store.Verify does: the
// auditor of many runs reads a batch's evidence at once instead of three
// round trips per run (docs/performance.md#audit-rate). Every key asked for
// is in the answer; a workflow without evidence has an empty chain, which
// is OK.
func (s *Store) ReadChains(ctx context.Context, workflowIDs []string) (map[string]*Chain, error) {
	out := make(map[string]*Chain, len(workflowIDs))
	for _, id := range workflowIDs {
		out[id] = &Chain{id: id}
	}
	if len(workflowIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+snapshotColumns+` FROM evidence_snapshots
		WHERE chain_key = ANY($1) ORDER BY chain_key, chain_seq`, workflowIDs)
	if err != nil {
		return nil, dbError("list snapshots", err)
	}
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			rows.Close()
			return nil, dbError("scan snapshot", err)
		}
		if c := out[r.ChainKey]; c != nil {
			c.Rows = append(c.Rows, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, dbError("list snapshots", err)
	}
	heads := map[string]*chainHead{}
	hr, err := s.pool.Query(ctx, `SELECT chain_key, last_seq, last_hash FROM evidence_chain_heads WHERE chain_key = ANY($1)`, workflowIDs)
	if err != nil {
		return nil, dbError("read chain head", err)
	}
	for hr.Next() {
		var key string
		var h chainHead
		if err := hr.Scan(&key, &h.seq, &h.hash); err != nil {
			hr.Close()
			return nil, dbError("read chain head", err)
		}
		heads[key] = &h
	}
	hr.Close()
	if err := hr.Err(); err != nil {
		return nil, dbError("read chain head", err)
	}
	auth, err := s.authorship(ctx)
	if err != nil {
		return nil, err
	}
	for id, c := range out {
		c.head, c.auth = heads[id], auth
	}
	return out, nil
}
