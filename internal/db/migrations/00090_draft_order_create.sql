-- One draft order write in one statement (docs/evidence.md#one-transaction). checkout.create_draft_order
-- used to make four round trips, each its own transaction: find the scope's
-- draft, write the audit pending, insert the draft, close the audit as success.
-- Called on its own, this function is one implicit transaction: the call's
-- two-phase audit row and its draft_orders row commit together or not at all,
-- so no failure leaves a pending audit or a draft without its closed audit
-- (docs/evidence.md#one-transaction).
--
-- The audit row keeps the rules of evidence.Store.WritePending and Finalize
-- (docs/evidence.md#two-phase-audit): a row of the correlation id that is
-- failed, or another tool's, forbids the write; a pending one (an earlier
-- attempt) is continued; one already success is left as it is. The row is
-- written final (success, finalized_at) in one insert rather than inserted
-- pending and updated in the same transaction, which nobody could observe.
--
-- r_outcome:
--   refused   the correlation id's audit row forbids the write; nothing written
--   conflict  the scope holds a draft for another quote hash; nothing written
--   replayed  the scope holds a draft for this quote hash: the audit is closed
--             success with draft_order_id and replayed=true
--   inserted  the draft is new: the audit is closed success with draft_order_id
--
-- Each statement below reads with a new snapshot (READ COMMITTED), so after an
-- ON CONFLICT DO NOTHING that waited for a concurrent writer the next statement
-- sees that writer's committed row. A race the function cannot settle (a
-- concurrent attempt of the same call wrote or closed the audit row between
-- its read and its write) raises serialization_failure: nothing is written
-- and the caller retries (UPSTREAM_ERROR, retryable).
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION draft_order_create(
    -- audit_events (evidence.TwoPhaseRow)
    p_correlation_id text, p_audit_tool text, p_audit_user_id_hash text, p_actor_type text, p_action text,
    p_reason text, p_payload_sha text, p_audit_workflow_id text, p_audit_run_id text, p_activity_id text,
    p_refs jsonb,
    -- draft_orders (commerce.NewDraft)
    p_draft_order_id text, p_user_id_hash text, p_tool text, p_idempotency_key text, p_quote_id text,
    p_quote_hash text, p_currency text, p_grand_total_minor bigint, p_total jsonb, p_ship_to_country text,
    p_ship_to_region text, p_ship_to_postal text, p_ship_to_sealed bytea, p_ship_to_nonce bytea,
    p_ship_to_key_id text, p_draft_correlation_id text, p_workflow_id text, p_run_id text,
    p_created_at timestamptz, p_expires_at timestamptz)
RETURNS TABLE (r_outcome text, r_audit_id bigint, r_audit_status text, r_audit_tool text, r_audit_closed boolean,
    r_draft_order_id text, r_status text, r_quote_hash text, r_grand_total_minor bigint, r_currency text,
    r_expires_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_patch jsonb;
BEGIN
    r_audit_id := 0; r_audit_status := ''; r_audit_tool := ''; r_audit_closed := false;
    r_draft_order_id := ''; r_status := ''; r_quote_hash := ''; r_grand_total_minor := 0; r_currency := '';

    -- Audit first (AUDIT-INV-04): the row an earlier attempt of this call left.
    SELECT a.audit_id, a.status, a.tool INTO r_audit_id, r_audit_status, r_audit_tool
        FROM audit_events a WHERE a.correlation_id = p_correlation_id AND a.two_phase;
    IF FOUND AND (r_audit_tool <> p_audit_tool OR r_audit_status = 'failed') THEN
        r_outcome := 'refused';
        RETURN NEXT;
        RETURN;
    END IF;
    IF NOT FOUND THEN
        r_audit_id := 0; r_audit_status := ''; r_audit_tool := '';
    END IF;

    -- The scope's unique constraint decides which call wins
    -- (docs/envelope.md#idempotency); the loser answers from the winner's row.
    INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status, quote_id, quote_hash,
        currency, grand_total_minor, total, ship_to_country, ship_to_region, ship_to_postal, ship_to_sealed,
        ship_to_nonce, ship_to_key_id, correlation_id, workflow_id, run_id, created_at, expires_at)
    VALUES (p_draft_order_id, p_user_id_hash, p_tool, p_idempotency_key, 'open', p_quote_id, p_quote_hash,
        p_currency, p_grand_total_minor, p_total, p_ship_to_country, p_ship_to_region, p_ship_to_postal,
        p_ship_to_sealed, p_ship_to_nonce, p_ship_to_key_id, p_draft_correlation_id, p_workflow_id, p_run_id,
        p_created_at, p_expires_at)
    ON CONFLICT ON CONSTRAINT draft_orders_idempotency DO NOTHING;
    IF FOUND THEN
        r_outcome := 'inserted';
        r_draft_order_id := p_draft_order_id; r_status := 'open'; r_quote_hash := p_quote_hash;
        r_grand_total_minor := p_grand_total_minor; r_currency := p_currency; r_expires_at := p_expires_at;
        v_patch := jsonb_build_object('draft_order_id', p_draft_order_id);
    ELSE
        SELECT d.draft_order_id, d.status, d.quote_hash, d.grand_total_minor, d.currency, d.expires_at
            INTO r_draft_order_id, r_status, r_quote_hash, r_grand_total_minor, r_currency, r_expires_at
            FROM draft_orders d
            WHERE d.user_id_hash = p_user_id_hash AND d.tool = p_tool AND d.idempotency_key = p_idempotency_key;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'draft orders: insert conflicted but no row holds the scope'
                USING ERRCODE = 'serialization_failure';
        END IF;
        IF r_quote_hash <> p_quote_hash THEN
            -- The key was used for another total: CONFLICT, and a pending
            -- row of an earlier attempt stays as it is (reconcile closes it).
            r_outcome := 'conflict';
            RETURN NEXT;
            RETURN;
        END IF;
        r_outcome := 'replayed';
        v_patch := jsonb_build_object('draft_order_id', r_draft_order_id, 'replayed', true);
    END IF;

    -- The audit row, closed success in the draft's transaction.
    IF r_audit_id = 0 THEN
        INSERT INTO audit_events (correlation_id, two_phase, tool, user_id_hash, actor_type, action, reason, status,
            payload_sha, workflow_id, run_id, activity_id, evidence_refs, finalized_at)
        VALUES (p_correlation_id, true, p_audit_tool, p_audit_user_id_hash, p_actor_type, p_action, p_reason,
            'success', p_payload_sha, p_audit_workflow_id, p_audit_run_id, p_activity_id, p_refs || v_patch, now())
        ON CONFLICT (correlation_id) WHERE two_phase DO NOTHING
        RETURNING audit_id INTO r_audit_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'audit %: written by a concurrent attempt, retry', p_correlation_id
                USING ERRCODE = 'serialization_failure';
        END IF;
        r_audit_closed := true;
    ELSIF r_audit_status = 'pending' THEN
        UPDATE audit_events a SET status = 'success', evidence_refs = a.evidence_refs || v_patch,
            updated_at = now(), finalized_at = now()
        WHERE a.audit_id = r_audit_id AND a.status = 'pending';
        IF NOT FOUND THEN
            RAISE EXCEPTION 'audit %: closed by a concurrent writer, retry', r_audit_id
                USING ERRCODE = 'serialization_failure';
        END IF;
        r_audit_closed := true;
    END IF;
    -- (A row already success was closed by an earlier attempt; like a second
    -- Finalize, this one changes nothing.)
    r_audit_status := 'success';
    r_audit_tool := p_audit_tool;
    RETURN NEXT;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION draft_order_create(text, text, text, text, text, text, text, text, text, text, jsonb, text, text,
    text, text, text, text, text, bigint, jsonb, text, text, text, bytea, bytea, text, text, text, text,
    timestamptz, timestamptz);
