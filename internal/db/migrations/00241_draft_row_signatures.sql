-- Draft rows name their author (docs/evidence.md#draft-row-signatures). The
-- runtime role may insert and update draft_orders, so a row it wrote by hand
-- looked like the worker's. Since this migration the worker signs each draft
-- row it writes (Ed25519, its own key) over the row's content, and the
-- audit and reconcile check it with the worker's public keys. A row without a
-- valid signature recorded after rows began to be signed (evidence_row_signing,
-- migration 00240) is named; rows recorded before keep being checked as they
-- were.
--
-- recorded_at is the database's: a trigger sets it on insert
-- (clock_timestamp()) and keeps it on update, whatever the caller says, so a
-- hand-made row cannot pass for one written before signing. Existing rows
-- keep NULL (before signing).
--
-- draft_order_create (migration 00150) takes the signature as three trailing
-- parameters with defaults, so the call of a build from before this migration
-- still resolves (its rows are named unsigned).
-- +goose Up
ALTER TABLE draft_orders ADD COLUMN workflow_type text;
ALTER TABLE draft_orders ADD COLUMN signer_key_id text;
ALTER TABLE draft_orders ADD COLUMN row_signature text;
ALTER TABLE draft_orders ADD COLUMN recorded_at timestamptz;

-- +goose StatementBegin
CREATE FUNCTION draft_orders_recorded_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.recorded_at := clock_timestamp();
    ELSE
        NEW.recorded_at := OLD.recorded_at;
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER draft_orders_recorded_at BEFORE INSERT OR UPDATE ON draft_orders
    FOR EACH ROW EXECUTE FUNCTION draft_orders_recorded_at();

-- +goose StatementBegin
DROP FUNCTION draft_order_create(text, text, text, text, text, text, text, text, text, text, jsonb, text, text,
    text, text, text, text, text, bigint, jsonb, text, text, text, bytea, bytea, text, text, text, text,
    timestamptz, timestamptz, jsonb);

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

-- +goose Down
DROP FUNCTION draft_order_create(text, text, text, text, text, text, text, text, text, text, jsonb, text, text,
    text, text, text, text, text, bigint, jsonb, text, text, text, bytea, bytea, text, text, text, text,
    timestamptz, timestamptz, jsonb, text, text, text);
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
    p_created_at timestamptz, p_expires_at timestamptz,
    -- the stock the draft takes
    p_reservations jsonb)
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
DROP TRIGGER draft_orders_recorded_at ON draft_orders;
DROP FUNCTION draft_orders_recorded_at();
ALTER TABLE draft_orders DROP COLUMN recorded_at;
ALTER TABLE draft_orders DROP COLUMN row_signature;
ALTER TABLE draft_orders DROP COLUMN signer_key_id;
ALTER TABLE draft_orders DROP COLUMN workflow_type;
