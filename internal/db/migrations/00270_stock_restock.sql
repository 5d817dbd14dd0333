-- Returned goods come back to stock (docs/stock.md#returns): a refund run,
-- told by the operator's "returned" signal, moves the units it refunded
-- from committed back to on hand, once. Migration 00260 allowed the kind
-- 'restock' but kept one movement per draft, line and kind: two refunds
-- of one order could never each return their units. A restock movement
-- now names its refund run, and the once-constraint is per run:
-- (draft, kind, sku, warehouse, refund run). Every other kind keeps
-- refund_run '' and so stays once per draft, line and kind.
-- +goose Up
ALTER TABLE stock_movements ADD COLUMN refund_run text NOT NULL DEFAULT '';
ALTER TABLE stock_movements DROP CONSTRAINT stock_movements_once;
ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_once UNIQUE (draft_order_id, kind, sku, warehouse, refund_run);
ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_restock_run CHECK ((kind = 'restock') = (refund_run <> ''));

-- stock_restock returns units of a paid draft order to on hand for the
-- refund run p_refund_run: the lines (sku, quantity) are spread over the
-- warehouses the order committed them from, and never more than was
-- committed less what earlier returns gave back. Once per refund run: a
-- repeat with the same lines answers 'already' with what it did, other
-- lines 'conflict'; too many units 'too_many' (nothing moves); an order
-- not paid 'not_committed'. Locks the hold, then the stock rows in
-- (warehouse, sku) order, as draft_order_create and stock_settle do.
-- +goose StatementBegin
CREATE FUNCTION stock_restock(p_draft_order_id text, p_refund_run text, p_lines jsonb, p_correlation_id text)
RETURNS TABLE (r_outcome text, r_lines jsonb, r_short jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_state text;
    v_line record;
    v_wh record;
    v_left integer;
    v_take integer;
    v_done jsonb;
    v_asked jsonb;
BEGIN
    IF p_refund_run = '' THEN
        RAISE EXCEPTION 'stock_restock: no refund run' USING ERRCODE = '22023';
    END IF;
    r_lines := '[]'::jsonb; r_short := '[]'::jsonb;
    SELECT h.state INTO v_state FROM stock_holds h WHERE h.draft_order_id = p_draft_order_id FOR UPDATE;
    IF NOT FOUND THEN
        r_outcome := 'not_found';
        RETURN NEXT;
        RETURN;
    END IF;
    IF v_state <> 'committed' THEN
        r_outcome := 'not_committed';
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT coalesce(jsonb_agg(jsonb_build_object('sku', r.sku, 'quantity', r.quantity) ORDER BY r.sku), '[]'::jsonb)
        INTO v_asked FROM (SELECT l.sku, sum(l.quantity)::integer AS quantity
            FROM jsonb_to_recordset(p_lines) AS l(sku text, quantity integer) GROUP BY l.sku) r;
    -- This run's return, made before: the same answer, or a conflict.
    SELECT coalesce(jsonb_agg(jsonb_build_object('sku', m.sku, 'warehouse', m.warehouse, 'quantity', m.quantity)
            ORDER BY m.warehouse, m.sku), '[]'::jsonb)
        INTO r_lines FROM stock_movements m
        WHERE m.draft_order_id = p_draft_order_id AND m.kind = 'restock' AND m.refund_run = p_refund_run;
    IF jsonb_array_length(r_lines) > 0 THEN
        SELECT coalesce(jsonb_agg(jsonb_build_object('sku', x.sku, 'quantity', x.quantity) ORDER BY x.sku), '[]'::jsonb)
            INTO v_done FROM (SELECT e->>'sku' AS sku, sum((e->>'quantity')::integer)::integer AS quantity
                FROM jsonb_array_elements(r_lines) e GROUP BY e->>'sku') x;
        r_outcome := CASE WHEN v_done = v_asked THEN 'already' ELSE 'conflict' END;
        RETURN NEXT;
        RETURN;
    END IF;
    -- What is left to return, per line: committed less returned before.
    FOR v_line IN SELECT a->>'sku' AS sku, (a->>'quantity')::integer AS quantity FROM jsonb_array_elements(v_asked) a
    LOOP
        SELECT coalesce(sum(CASE m.kind WHEN 'commit' THEN m.quantity ELSE -m.quantity END), 0)::integer INTO v_left
            FROM stock_movements m
            WHERE m.draft_order_id = p_draft_order_id AND m.sku = v_line.sku AND m.kind IN ('commit', 'restock');
        IF v_left < v_line.quantity THEN
            r_short := r_short || jsonb_build_object('sku', v_line.sku, 'requested', v_line.quantity, 'returnable', greatest(v_left, 0));
        END IF;
    END LOOP;
    IF jsonb_array_length(r_short) > 0 THEN
        r_outcome := 'too_many';
        RETURN NEXT;
        RETURN;
    END IF;
    -- Spread each line over the warehouses it was committed from, in
    -- (warehouse, sku) order, and put the units back on hand.
    FOR v_wh IN
        SELECT c.sku, c.warehouse, c.quantity - coalesce((SELECT sum(r.quantity) FROM stock_movements r
                WHERE r.draft_order_id = c.draft_order_id AND r.kind = 'restock' AND r.sku = c.sku AND r.warehouse = c.warehouse), 0) AS left_here
        FROM stock_movements c
        WHERE c.draft_order_id = p_draft_order_id AND c.kind = 'commit'
            AND c.sku IN (SELECT a->>'sku' FROM jsonb_array_elements(v_asked) a)
        ORDER BY c.warehouse, c.sku
    LOOP
        SELECT (a->>'quantity')::integer - coalesce((SELECT sum((t->>'quantity')::integer) FROM jsonb_array_elements(r_lines) t
                WHERE t->>'sku' = v_wh.sku), 0)
            INTO v_take FROM jsonb_array_elements(v_asked) a WHERE a->>'sku' = v_wh.sku;
        v_take := least(v_take, v_wh.left_here);
        CONTINUE WHEN v_take <= 0;
        IF v_wh.warehouse = 'DE' THEN
            UPDATE catalog_stock SET on_hand = on_hand + v_take, updated_at = now() WHERE sku = v_wh.sku;
        ELSE
            UPDATE catalog_warehouse_stock SET on_hand = on_hand + v_take, updated_at = now()
                WHERE sku = v_wh.sku AND warehouse = v_wh.warehouse;
        END IF;
        INSERT INTO stock_movements (draft_order_id, kind, sku, warehouse, quantity, reason, correlation_id, refund_run)
        VALUES (p_draft_order_id, 'restock', v_wh.sku, v_wh.warehouse, v_take, 'returned', p_correlation_id, p_refund_run);
        r_lines := r_lines || jsonb_build_object('sku', v_wh.sku, 'warehouse', v_wh.warehouse, 'quantity', v_take);
    END LOOP;
    r_outcome := 'restocked';
    RETURN NEXT;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION stock_restock(text, text, jsonb, text);
DELETE FROM stock_movements WHERE kind = 'restock';
ALTER TABLE stock_movements DROP CONSTRAINT stock_movements_restock_run;
ALTER TABLE stock_movements DROP CONSTRAINT stock_movements_once;
ALTER TABLE stock_movements DROP COLUMN refund_run;
ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_once UNIQUE (draft_order_id, kind, sku, warehouse);
