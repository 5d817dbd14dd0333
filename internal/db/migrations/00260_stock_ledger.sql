-- The stock ledger (docs/stock.md): a draft order holds its units until it
-- is paid (commit) or gives them back (release: cancelled, payment failed,
-- hold ended), exactly once. Before, draft_order_create (migration 00150)
-- raised catalog_stock.reserved and nothing ever lowered it: every
-- abandoned draft leaked its units.
--
-- stock_holds: one row per draft that took stock, its state and why it
-- ended. stock_movements: one row per line and kind (reserve at the write,
-- then commit or release, and restock when goods come back); the unique
-- constraint is what makes each movement happen once, whoever retries.
-- Movements are append-only for the runtime. stock_opening keeps what was
-- reserved before the ledger existed, so that, per SKU and warehouse,
-- reserved = opening + reserve - release - commit (checked by reconcile,
-- docs/stock.md#reconcile).
-- +goose Up
CREATE TABLE stock_holds (
    draft_order_id text PRIMARY KEY REFERENCES draft_orders (draft_order_id),
    workflow_id    text NOT NULL DEFAULT '',
    state          text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'committed', 'released')),
    -- why it ended: paid (committed); cancelled, payment_failed or
    -- hold_expired (released).
    reason         text NOT NULL DEFAULT '' CHECK (reason IN ('', 'paid', 'cancelled', 'payment_failed', 'hold_expired')),
    hold_until     timestamptz NOT NULL,
    correlation_id text NOT NULL,
    settle_correlation_id text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    settled_at     timestamptz,
    CHECK ((state = 'held') = (settled_at IS NULL)),
    CHECK ((state = 'held') = (reason = '')),
    CHECK (state <> 'committed' OR reason = 'paid')
);
CREATE INDEX stock_holds_open ON stock_holds (hold_until) WHERE state = 'held';

CREATE TABLE stock_movements (
    movement_id    bigserial PRIMARY KEY,
    draft_order_id text NOT NULL REFERENCES draft_orders (draft_order_id),
    kind           text NOT NULL CHECK (kind IN ('reserve', 'commit', 'release', 'restock')),
    sku            text NOT NULL,
    warehouse      text NOT NULL CHECK (warehouse ~ '^[A-Z]{2}$'),
    quantity       integer NOT NULL CHECK (quantity > 0),
    reason         text NOT NULL,
    correlation_id text NOT NULL,
    at             timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT stock_movements_once UNIQUE (draft_order_id, kind, sku, warehouse)
);
CREATE INDEX stock_movements_line ON stock_movements (sku, warehouse);

REVOKE ALL ON stock_movements FROM cartwright_runtime;
GRANT SELECT, INSERT ON stock_movements TO cartwright_runtime;

CREATE TABLE stock_opening (
    sku       text NOT NULL,
    warehouse text NOT NULL,
    reserved  integer NOT NULL,
    PRIMARY KEY (sku, warehouse)
);
INSERT INTO stock_opening (sku, warehouse, reserved)
    SELECT sku, 'DE', reserved FROM catalog_stock
    UNION ALL SELECT sku, warehouse, reserved FROM catalog_warehouse_stock;
REVOKE ALL ON stock_opening FROM cartwright_runtime;
GRANT SELECT ON stock_opening TO cartwright_runtime;

-- +goose StatementBegin
DROP FUNCTION draft_order_create(text, text, text, text, text, text, text, text, text, text, jsonb, text, text,
    text, text, text, text, text, bigint, jsonb, text, text, text, bytea, bytea, text, text, text, text,
    timestamptz, timestamptz, jsonb, text, text, text);

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
    p_created_at timestamptz, p_expires_at timestamptz,
    -- the stock the draft takes
    p_reservations jsonb,
    -- who wrote it (migration 00241, docs/evidence.md#draft-row-signatures)
    p_workflow_type text DEFAULT NULL, p_signer_key_id text DEFAULT NULL, p_row_signature text DEFAULT NULL)
RETURNS TABLE (r_outcome text, r_audit_id bigint, r_audit_status text, r_audit_tool text, r_audit_closed boolean,
    r_draft_order_id text, r_status text, r_quote_hash text, r_grand_total_minor bigint, r_currency text,
    r_expires_at timestamptz, r_short jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_patch jsonb;
    v_line record;
    v_avail integer;
BEGIN
    r_audit_id := 0; r_audit_status := ''; r_audit_tool := ''; r_audit_closed := false;
    r_draft_order_id := ''; r_status := ''; r_quote_hash := ''; r_grand_total_minor := 0; r_currency := '';
    r_short := '[]'::jsonb;

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

    -- A repeat answers from the stored draft and takes no stock again.
    SELECT d.draft_order_id, d.status, d.quote_hash, d.grand_total_minor, d.currency, d.expires_at
        INTO r_draft_order_id, r_status, r_quote_hash, r_grand_total_minor, r_currency, r_expires_at
        FROM draft_orders d
        WHERE d.user_id_hash = p_user_id_hash AND d.tool = p_tool AND d.idempotency_key = p_idempotency_key;
    IF NOT FOUND THEN
        r_draft_order_id := ''; r_status := ''; r_quote_hash := ''; r_grand_total_minor := 0; r_currency := '';
        r_expires_at := NULL;
        -- Lock every stock row the draft takes, in (warehouse, sku) order,
        -- and check it; a concurrent writer of the same rows waits here.
        FOR v_line IN
            SELECT r.sku, r.warehouse, sum(r.quantity)::integer AS quantity
            FROM jsonb_to_recordset(p_reservations) AS r(sku text, warehouse text, quantity integer)
            GROUP BY r.sku, r.warehouse ORDER BY r.warehouse, r.sku
        LOOP
            IF v_line.warehouse = 'DE' THEN
                SELECT s.on_hand - s.reserved INTO v_avail FROM catalog_stock s WHERE s.sku = v_line.sku FOR UPDATE;
            ELSE
                SELECT w.on_hand - w.reserved INTO v_avail FROM catalog_warehouse_stock w
                    WHERE w.sku = v_line.sku AND w.warehouse = v_line.warehouse FOR UPDATE;
            END IF;
            IF NOT FOUND THEN
                v_avail := 0;
            END IF;
            IF v_avail < v_line.quantity THEN
                r_short := r_short || jsonb_build_object('sku', v_line.sku, 'warehouse', v_line.warehouse,
                    'requested', v_line.quantity, 'available', greatest(v_avail, 0));
            END IF;
        END LOOP;
        IF jsonb_array_length(r_short) > 0 THEN
            -- Nothing written; the locks go with the statement.
            r_outcome := 'out_of_stock';
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;

    -- The scope's unique constraint decides which call wins
    -- (docs/envelope.md#idempotency); the loser answers from the winner's row.
    INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status, quote_id, quote_hash,
        currency, grand_total_minor, total, ship_to_country, ship_to_region, ship_to_postal, ship_to_sealed,
        ship_to_nonce, ship_to_key_id, correlation_id, workflow_id, run_id, created_at, expires_at, workflow_type,
        signer_key_id, row_signature)
    VALUES (p_draft_order_id, p_user_id_hash, p_tool, p_idempotency_key, 'open', p_quote_id, p_quote_hash,
        p_currency, p_grand_total_minor, p_total, p_ship_to_country, p_ship_to_region, p_ship_to_postal,
        p_ship_to_sealed, p_ship_to_nonce, p_ship_to_key_id, p_draft_correlation_id, p_workflow_id, p_run_id,
        p_created_at, p_expires_at, p_workflow_type, p_signer_key_id, p_row_signature)
    ON CONFLICT ON CONSTRAINT draft_orders_idempotency DO NOTHING;
    IF FOUND THEN
        r_outcome := 'inserted';
        r_draft_order_id := p_draft_order_id; r_status := 'open'; r_quote_hash := p_quote_hash;
        r_grand_total_minor := p_grand_total_minor; r_currency := p_currency; r_expires_at := p_expires_at;
        v_patch := jsonb_build_object('draft_order_id', p_draft_order_id, 'reserved', p_reservations);
        -- The hold: the draft keeps its units until it is paid (commit) or
        -- cancelled, its payment fails or the hold ends (release).
        INSERT INTO stock_holds (draft_order_id, workflow_id, hold_until, correlation_id)
        VALUES (p_draft_order_id, p_workflow_id, p_expires_at, p_draft_correlation_id);
        -- Take the stock checked above (the rows are still locked).
        FOR v_line IN
            SELECT r.sku, r.warehouse, sum(r.quantity)::integer AS quantity
            FROM jsonb_to_recordset(p_reservations) AS r(sku text, warehouse text, quantity integer)
            GROUP BY r.sku, r.warehouse ORDER BY r.warehouse, r.sku
        LOOP
            IF v_line.warehouse = 'DE' THEN
                UPDATE catalog_stock SET reserved = reserved + v_line.quantity, updated_at = now()
                    WHERE sku = v_line.sku;
            ELSE
                UPDATE catalog_warehouse_stock SET reserved = reserved + v_line.quantity, updated_at = now()
                    WHERE sku = v_line.sku AND warehouse = v_line.warehouse;
            END IF;
            -- The ledger's reserve movement (migration 00260): what release
            -- or commit later undoes, line by line, exactly once.
            INSERT INTO stock_movements (draft_order_id, kind, sku, warehouse, quantity, reason, correlation_id)
            VALUES (p_draft_order_id, 'reserve', v_line.sku, v_line.warehouse, v_line.quantity, 'draft_created',
                p_draft_correlation_id);
        END LOOP;
    ELSE
        SELECT d.draft_order_id, d.status, d.quote_hash, d.grand_total_minor, d.currency, d.expires_at
            INTO r_draft_order_id, r_status, r_quote_hash, r_grand_total_minor, r_currency, r_expires_at
            FROM draft_orders d
            WHERE d.user_id_hash = p_user_id_hash AND d.tool = p_tool AND d.idempotency_key = p_idempotency_key;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'draft orders: insert conflicted but no row holds the scope'
                USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;
    IF r_outcome IS NULL THEN
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
    r_audit_status := 'success';
    r_audit_tool := p_audit_tool;
    RETURN NEXT;
END;
$$;
-- +goose StatementEnd

-- stock_settle ends a hold: commit (paid: the units leave on_hand and
-- reserved) or release (back to available: reserved only). Once: a hold
-- already ended the same way answers 'already' with what it did, one
-- ended the other way 'conflict' and changes nothing. Stock rows are
-- locked in (warehouse, sku) order, as draft_order_create locks them.
-- +goose StatementBegin
CREATE FUNCTION stock_settle(p_draft_order_id text, p_action text, p_reason text, p_correlation_id text)
RETURNS TABLE (r_outcome text, r_state text, r_reason text, r_lines jsonb, r_settled_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_hold stock_holds%ROWTYPE;
    v_kind text;
    v_line record;
BEGIN
    IF p_action NOT IN ('commit', 'release') THEN
        RAISE EXCEPTION 'stock_settle: action % is neither commit nor release', p_action USING ERRCODE = '22023';
    END IF;
    IF (p_action = 'commit') <> (p_reason = 'paid') THEN
        RAISE EXCEPTION 'stock_settle: % for reason %', p_action, p_reason USING ERRCODE = '22023';
    END IF;
    v_kind := p_action;
    SELECT * INTO v_hold FROM stock_holds h WHERE h.draft_order_id = p_draft_order_id FOR UPDATE;
    IF NOT FOUND THEN
        r_outcome := 'not_found'; r_lines := '[]'::jsonb;
        RETURN NEXT;
        RETURN;
    END IF;
    IF v_hold.state <> 'held' THEN
        r_outcome := CASE WHEN (v_hold.state = 'committed') = (p_action = 'commit') THEN 'already' ELSE 'conflict' END;
        r_state := v_hold.state; r_reason := v_hold.reason; r_settled_at := v_hold.settled_at;
        SELECT coalesce(jsonb_agg(jsonb_build_object('sku', m.sku, 'warehouse', m.warehouse, 'quantity', m.quantity)
                ORDER BY m.warehouse, m.sku), '[]'::jsonb)
            INTO r_lines FROM stock_movements m
            WHERE m.draft_order_id = p_draft_order_id AND m.kind = CASE WHEN v_hold.state = 'committed' THEN 'commit' ELSE 'release' END;
        RETURN NEXT;
        RETURN;
    END IF;
    r_lines := '[]'::jsonb;
    FOR v_line IN
        SELECT m.sku, m.warehouse, m.quantity FROM stock_movements m
        WHERE m.draft_order_id = p_draft_order_id AND m.kind = 'reserve' ORDER BY m.warehouse, m.sku
    LOOP
        IF v_line.warehouse = 'DE' THEN
            UPDATE catalog_stock SET reserved = reserved - v_line.quantity,
                on_hand = on_hand - CASE WHEN v_kind = 'commit' THEN v_line.quantity ELSE 0 END, updated_at = now()
                WHERE sku = v_line.sku;
        ELSE
            UPDATE catalog_warehouse_stock SET reserved = reserved - v_line.quantity,
                on_hand = on_hand - CASE WHEN v_kind = 'commit' THEN v_line.quantity ELSE 0 END, updated_at = now()
                WHERE sku = v_line.sku AND warehouse = v_line.warehouse;
        END IF;
        INSERT INTO stock_movements (draft_order_id, kind, sku, warehouse, quantity, reason, correlation_id)
        VALUES (p_draft_order_id, v_kind, v_line.sku, v_line.warehouse, v_line.quantity, p_reason, p_correlation_id);
        r_lines := r_lines || jsonb_build_object('sku', v_line.sku, 'warehouse', v_line.warehouse, 'quantity', v_line.quantity);
    END LOOP;
    UPDATE stock_holds SET state = CASE WHEN v_kind = 'commit' THEN 'committed' ELSE 'released' END,
        reason = p_reason, settle_correlation_id = p_correlation_id, settled_at = now()
        WHERE draft_order_id = p_draft_order_id
        RETURNING state, reason, settled_at INTO r_state, r_reason, r_settled_at;
    UPDATE draft_orders SET status = CASE WHEN v_kind = 'commit' THEN 'converted'
            WHEN p_reason = 'hold_expired' THEN 'expired' ELSE 'cancelled' END
        WHERE draft_order_id = p_draft_order_id AND status = 'open';
    r_outcome := 'settled';
    RETURN NEXT;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION stock_settle(text, text, text, text);
-- +goose StatementBegin
DROP FUNCTION draft_order_create(text, text, text, text, text, text, text, text, text, text, jsonb, text, text,
    text, text, text, text, text, bigint, jsonb, text, text, text, bytea, bytea, text, text, text, text,
    timestamptz, timestamptz, jsonb, text, text, text);

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
    p_created_at timestamptz, p_expires_at timestamptz,
    -- the stock the draft takes
    p_reservations jsonb,
    -- who wrote it (docs/evidence.md#draft-row-signatures): NULL from a build
    -- from before migration 00241, whose row is then named unsigned
    p_workflow_type text DEFAULT NULL, p_signer_key_id text DEFAULT NULL, p_row_signature text DEFAULT NULL)
RETURNS TABLE (r_outcome text, r_audit_id bigint, r_audit_status text, r_audit_tool text, r_audit_closed boolean,
    r_draft_order_id text, r_status text, r_quote_hash text, r_grand_total_minor bigint, r_currency text,
    r_expires_at timestamptz, r_short jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_patch jsonb;
    v_line record;
    v_avail integer;
BEGIN
    r_audit_id := 0; r_audit_status := ''; r_audit_tool := ''; r_audit_closed := false;
    r_draft_order_id := ''; r_status := ''; r_quote_hash := ''; r_grand_total_minor := 0; r_currency := '';
    r_short := '[]'::jsonb;

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

    -- A repeat answers from the stored draft and takes no stock again.
    SELECT d.draft_order_id, d.status, d.quote_hash, d.grand_total_minor, d.currency, d.expires_at
        INTO r_draft_order_id, r_status, r_quote_hash, r_grand_total_minor, r_currency, r_expires_at
        FROM draft_orders d
        WHERE d.user_id_hash = p_user_id_hash AND d.tool = p_tool AND d.idempotency_key = p_idempotency_key;
    IF NOT FOUND THEN
        r_draft_order_id := ''; r_status := ''; r_quote_hash := ''; r_grand_total_minor := 0; r_currency := '';
        r_expires_at := NULL;
        -- Lock every stock row the draft takes, in (warehouse, sku) order,
        -- and check it; a concurrent writer of the same rows waits here.
        FOR v_line IN
            SELECT r.sku, r.warehouse, sum(r.quantity)::integer AS quantity
            FROM jsonb_to_recordset(p_reservations) AS r(sku text, warehouse text, quantity integer)
            GROUP BY r.sku, r.warehouse ORDER BY r.warehouse, r.sku
        LOOP
            IF v_line.warehouse = 'DE' THEN
                SELECT s.on_hand - s.reserved INTO v_avail FROM catalog_stock s WHERE s.sku = v_line.sku FOR UPDATE;
            ELSE
                SELECT w.on_hand - w.reserved INTO v_avail FROM catalog_warehouse_stock w
                    WHERE w.sku = v_line.sku AND w.warehouse = v_line.warehouse FOR UPDATE;
            END IF;
            IF NOT FOUND THEN
                v_avail := 0;
            END IF;
            IF v_avail < v_line.quantity THEN
                r_short := r_short || jsonb_build_object('sku', v_line.sku, 'warehouse', v_line.warehouse,
                    'requested', v_line.quantity, 'available', greatest(v_avail, 0));
            END IF;
        END LOOP;
        IF jsonb_array_length(r_short) > 0 THEN
            -- Nothing written; the locks go with the statement.
            r_outcome := 'out_of_stock';
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;

    -- The scope's unique constraint decides which call wins
    -- (docs/envelope.md#idempotency); the loser answers from the winner's row.
    INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status, quote_id, quote_hash,
        currency, grand_total_minor, total, ship_to_country, ship_to_region, ship_to_postal, ship_to_sealed,
        ship_to_nonce, ship_to_key_id, correlation_id, workflow_id, run_id, created_at, expires_at, workflow_type,
        signer_key_id, row_signature)
    VALUES (p_draft_order_id, p_user_id_hash, p_tool, p_idempotency_key, 'open', p_quote_id, p_quote_hash,
        p_currency, p_grand_total_minor, p_total, p_ship_to_country, p_ship_to_region, p_ship_to_postal,
        p_ship_to_sealed, p_ship_to_nonce, p_ship_to_key_id, p_draft_correlation_id, p_workflow_id, p_run_id,
        p_created_at, p_expires_at, p_workflow_type, p_signer_key_id, p_row_signature)
    ON CONFLICT ON CONSTRAINT draft_orders_idempotency DO NOTHING;
    IF FOUND THEN
        r_outcome := 'inserted';
        r_draft_order_id := p_draft_order_id; r_status := 'open'; r_quote_hash := p_quote_hash;
        r_grand_total_minor := p_grand_total_minor; r_currency := p_currency; r_expires_at := p_expires_at;
        v_patch := jsonb_build_object('draft_order_id', p_draft_order_id, 'reserved', p_reservations);
        -- Take the stock checked above (the rows are still locked).
        FOR v_line IN
            SELECT r.sku, r.warehouse, sum(r.quantity)::integer AS quantity
            FROM jsonb_to_recordset(p_reservations) AS r(sku text, warehouse text, quantity integer)
            GROUP BY r.sku, r.warehouse ORDER BY r.warehouse, r.sku
        LOOP
            IF v_line.warehouse = 'DE' THEN
                UPDATE catalog_stock SET reserved = reserved + v_line.quantity, updated_at = now()
                    WHERE sku = v_line.sku;
            ELSE
                UPDATE catalog_warehouse_stock SET reserved = reserved + v_line.quantity, updated_at = now()
                    WHERE sku = v_line.sku AND warehouse = v_line.warehouse;
            END IF;
        END LOOP;
    ELSE
        SELECT d.draft_order_id, d.status, d.quote_hash, d.grand_total_minor, d.currency, d.expires_at
            INTO r_draft_order_id, r_status, r_quote_hash, r_grand_total_minor, r_currency, r_expires_at
            FROM draft_orders d
            WHERE d.user_id_hash = p_user_id_hash AND d.tool = p_tool AND d.idempotency_key = p_idempotency_key;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'draft orders: insert conflicted but no row holds the scope'
                USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;
    IF r_outcome IS NULL THEN
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
    r_audit_status := 'success';
    r_audit_tool := p_audit_tool;
    RETURN NEXT;
END;
$$;
-- +goose StatementEnd
DROP TABLE stock_opening;
DROP TABLE stock_movements;
DROP TABLE stock_holds;
