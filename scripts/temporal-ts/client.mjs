// Temporal's official TypeScript SDK as a backend would use it to drive a
// draft order (docs/backend.md#other-languages): Update-with-Start of
// DraftOrder with the next_action update carrying the order, confirm_total,
// and a confirm after the run ended. No cartwright code runs here, only the
// SDK and the payload codec (AES-256-GCM, the ring of
// CARTWRIGHT_PAYLOAD_KEYS, as client/codec does). workflows/draftordertest/
// tsclient_test.go runs it with TEMPORAL_ADDRESS, TASK_QUEUE, USER_ID and
// the payload ring, and checks what it prints: one JSON object, what this
// client read.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import {
  Client,
  Connection,
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
} from "@temporalio/client";
import { ApplicationFailure, DefaultFailureConverter } from "@temporalio/common";
import proto from "@temporalio/proto";

const Payload = proto.temporal.api.common.v1.Payload;
const utf8 = (s) => new TextEncoder().encode(s);

// The ring "id:base64key,…" and the id that encrypts.
const ring = new Map(
  process.env.CARTWRIGHT_PAYLOAD_KEYS.split(",").map((e) => {
    const i = e.indexOf(":");
    return [e.slice(0, i), Buffer.from(e.slice(i + 1), "base64")];
  }),
);
const currentID = process.env.CARTWRIGHT_PAYLOAD_KEY_ID;

// codec is client/codec's format: the whole Payload protobuf sealed with
// AES-256-GCM, nonce first, the key id as additional data.
const codec = {
  async encode(payloads) {
    return payloads.map((p) => {
      const nonce = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", ring.get(currentID), nonce);
      c.setAAD(Buffer.from(currentID));
      const sealed = Buffer.concat([c.update(Payload.encode(p).finish()), c.final(), c.getAuthTag()]);
      return {
        metadata: {
          encoding: utf8("binary/encrypted"),
          "encryption-key-id": utf8(currentID),
          "encryption-cipher": utf8("AES-256-GCM"),
        },
        data: Buffer.concat([nonce, sealed]),
      };
    });
  },
  async decode(payloads) {
    return payloads.map((p) => {
      if (Buffer.from(p.metadata?.encoding ?? []).toString() !== "binary/encrypted") return p;
      const id = Buffer.from(p.metadata["encryption-key-id"]).toString();
      const data = Buffer.from(p.data);
      const d = createDecipheriv("aes-256-gcm", ring.get(id), data.subarray(0, 12));
      d.setAAD(Buffer.from(id));
      d.setAuthTag(data.subarray(data.length - 16));
      const plain = Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]);
      return Payload.decode(plain);
    });
  },
};

const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
const client = new Client({
  connection,
  namespace: "default",
  dataConverter: {
    payloadCodecs: [codec],
    failureConverter: new DefaultFailureConverter({ encodeCommonAttributes: true }),
  },
});
const taskQueue = process.env.TASK_QUEUE;
const user = process.env.USER_ID;

// refusal is what a caller reads of a refused update: the closed-set code
// (the ApplicationFailure's type) and the error object cartwright sends as
// its first detail.
function refusal(err) {
  let cause = err instanceof WorkflowUpdateFailedError ? err.cause : err;
  while (cause && !(cause instanceof ApplicationFailure) && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure) {
    return { kind: "application", code: cause.type, message: cause.message, error: cause.details?.[0] ?? null };
  }
  return { kind: "other", name: err?.name ?? "", message: String(err?.message ?? err) };
}

function order(key, items) {
  return {
    request: { request_id: `req-${key}`, user_id: user, idempotency_key: key, currency: "EUR" },
    items,
    ship_to: { name: "Erika Mustermann", line1: "Invalidenstrasse 116", city: "Berlin", postal_code: "10115", country: "DE" },
  };
}

// start is Update-with-Start of DraftOrder, as docs/backend.md#other-languages
// says: the id draft-order/{user}/{key}, attach to an open run, a closed
// one keeps the key unless it failed; next_action carries the order.
async function start(input) {
  const op = new WithStartWorkflowOperation("DraftOrder", {
    workflowId: `draft-order/${user}/${input.request.idempotency_key}`,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: "USE_EXISTING",
    workflowIdReusePolicy: "ALLOW_DUPLICATE_FAILED_ONLY",
  });
  try {
    const status = await client.workflow.executeUpdateWithStart("next_action", {
      args: [{ order: input }],
      startWorkflowOperation: op,
    });
    const handle = await op.workflowHandle();
    return { ok: true, status, runId: handle.firstExecutionRunId ?? null };
  } catch (err) {
    return { ok: false, refusal: refusal(err) };
  }
}

async function describe(id) {
  const d = await client.workflow.getHandle(id).describe();
  return { status: d.status.name, runId: d.runId };
}

const out = {};
const tee = [{ sku: "TEE-ORG-M-WHT", quantity: 1 }];
const tag = randomBytes(4).toString("hex");

// 1. A bad input: the update answers INVALID_ARGUMENT naming the field;
// the run is not left failed, and the key is free for the corrected order.
const badKey = `ts-bad-${tag}`;
out.bad = await start(order(badKey, [{ sku: "TEE-ORG-M-WHT", quantity: 0 }]));
out.badRun = await describe(`draft-order/${user}/${badKey}`);
out.corrected = await start(order(badKey, tee));

// 1b. A currency the exchange rates in use do not price (THB: the test
// worker prices with the shipped table, which lacks it): the run's first
// step refuses it through the update the same way, offering the rates'
// currencies, and the run ends canceled.
const thbKey = `ts-thb-${tag}`;
const thb = order(thbKey, tee);
thb.request.currency = "THB";
out.currency = await start(thb);
out.currencyRun = await describe(`draft-order/${user}/${thbKey}`);

// 2. The same key with another basket: CONFLICT, the first run untouched.
const key = `ts-order-${tag}`;
out.first = await start(order(key, tee));
out.other = await start(order(key, [{ sku: "TEE-ORG-M-WHT", quantity: 3 }]));
out.repeat = await start(order(key, tee));

// 3. Confirm, cancel the written draft, then confirm again after the run ended.
const handle = client.workflow.getHandle(`draft-order/${user}/${key}`);
const hash = out.first.status?.confirmation?.quote_hash;
try {
  out.confirm = { ok: true, answer: await handle.executeUpdate("confirm_total", { args: [{ quote_hash: hash }] }) };
} catch (err) {
  out.confirm = { ok: false, refusal: refusal(err) };
}
// The written draft's run goes on holding its stock: the user cancels it
// (cancel_order answers once the stock is back), and the run ends.
try {
  out.cancelOrder = { ok: true, answer: await handle.executeUpdate("cancel_order", { args: [{ reason: "typescript test" }] }) };
} catch (err) {
  out.cancelOrder = { ok: false, refusal: refusal(err) };
}
const result = await handle.result();
try {
  out.lateConfirm = { ok: true, answer: await handle.executeUpdate("confirm_total", { args: [{ quote_hash: hash }] }) };
} catch (err) {
  out.lateConfirm = { ok: false, refusal: refusal(err) };
}
// What "already done" is for a caller whose confirm found the run closed:
// its result is a draft order for this very hash.
out.lateConfirmRead = {
  state: result.state,
  alreadyDone: result.state === "DRAFT_CREATED" && result.draft_order?.quote_hash === hash,
};
out.hash = hash;
out.correctedId = `draft-order/${user}/${badKey}`;
console.log(JSON.stringify(out));
await connection.close();
