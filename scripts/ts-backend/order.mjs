// A backend in TypeScript drives a draft order from start to draft with
// Temporal's official TypeScript SDK and nothing but docs/other-languages.md:
// Update-with-Start carrying next_action, the total it answers, then
// confirm_total naming its quote_hash. It prints one JSON line of what it
// read, which the Go test (starter/tsbackend_test.go) checks against the
// database and the history.
import { Connection, Client, WithStartWorkflowOperation } from '@temporalio/client';
import { DefaultFailureConverter } from '@temporalio/common';
import { CartwrightCodec, keyRing } from './codec.mjs';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};

const connection = await Connection.connect({ address: env('TEMPORAL_ADDRESS') });
const client = new Client({
  connection,
  namespace: process.env.TEMPORAL_NAMESPACE || 'default',
  dataConverter: {
    payloadCodecs: [new CartwrightCodec(keyRing(env('CARTWRIGHT_PAYLOAD_KEYS'), env('CARTWRIGHT_PAYLOAD_KEY_ID')))],
    failureConverter: new DefaultFailureConverter({ encodeCommonAttributes: true }),
  },
});

const userId = env('ORDER_USER_ID');
const key = env('ORDER_KEY');
const input = {
  request: { user_id: userId, idempotency_key: key, currency: 'EUR', client: { app: 'backend' } },
  items: [{ sku: 'TEE-ORG-M-WHT', quantity: 2 }],
  ship_to: { name: 'Erika Mustermann', line1: 'Invalidenstrasse 116', city: 'Berlin', postal_code: '10115', country: 'DE' },
  shipping_service: 'standard',
  incoterm: 'DDP',
};
const out = {};
try {
  const start = new WithStartWorkflowOperation('DraftOrder', {
    workflowId: `draft-order/${userId}/${key}`,
    taskQueue: env('CARTWRIGHT_TASK_QUEUE'),
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  const first = await client.workflow.executeUpdateWithStart('next_action', { args: [{}], startWorkflowOperation: start });
  const handle = await start.workflowHandle();
  out.workflow_id = handle.workflowId;
  out.first_state = first.state;
  out.quote_hash = first.confirmation?.quote_hash;
  out.grand_total = first.confirmation?.grand_total;
  const queried = await handle.query('status');
  out.queried_state = queried.state;
  // A stale hash is refused by the update's validator with its closed code.
  try {
    await client.workflow.getHandle(handle.workflowId).executeUpdate('confirm_total', { args: [{ quote_hash: 'sha256:' + '0'.repeat(64) }] });
    out.stale = { refused: false };
  } catch (e) {
    const f = e.cause ?? e;
    out.stale = { refused: true, type: f.type, message: f.message };
  }
  const answer = await client.workflow.getHandle(handle.workflowId).executeUpdate('confirm_total', { args: [{ quote_hash: out.quote_hash }] });
  out.already_done = answer.already_done;
  out.result_state = answer.result.state;
  out.draft_order_id = answer.result.draft_order?.draft_order_id;
} finally {
  await connection.close();
}
console.log(JSON.stringify(out));
