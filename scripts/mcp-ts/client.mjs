// The official TypeScript MCP SDK as a client of the gateway
// (docs/mcp.md#http-status). gateway/tsclient_test.go runs it with
// MCP_URL and MCP_TOKEN (a live token) and MCP_BAD_TOKEN (an unknown one)
// and checks what it prints: one JSON object, what this client read.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.env.MCP_URL);

async function connect(token) {
  const client = new Client({ name: "cartwright-ts-test", version: "0.0.1" });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

// rpcError is what the client read of a refused call: the JSON-RPC code
// and error.data, or the transport error it saw instead.
function rpcError(err) {
  if (err instanceof McpError) {
    return { kind: "jsonrpc", code: err.code, message: err.message, data: err.data ?? null };
  }
  return { kind: "transport", name: err?.name ?? "", code: err?.code ?? null, message: String(err?.message ?? err) };
}

const out = {};
const client = await connect(process.env.MCP_TOKEN);
const listed = await client.listTools();
out.tools = listed.tools.map((t) => t.name).sort();

try {
  await client.callTool({ name: "memory_store", arguments: {} });
  out.unknownTool = { kind: "none" };
} catch (err) {
  out.unknownTool = rpcError(err);
}

// A read tool's answer (its structuredContent is checked by this client
// against the tool's outputSchema) and a tool's own refusal (a result
// with isError, not a JSON-RPC error).
const cite = await client.callTool({ name: "knowledge.cite", arguments: { claim: "Stripe asks for the representative's date of birth" } });
out.cite = { isError: cite.isError ?? false, ok: cite.structuredContent?.ok ?? null };
try {
  const bad = await client.callTool({ name: "knowledge.cite", arguments: { claim: 5 } });
  out.badArguments = { isError: bad.isError ?? false, code: bad.structuredContent?.error?.code ?? null };
} catch (err) {
  out.badArguments = rpcError(err);
}
try {
  const st = await client.callTool({ name: "draft_order.status", arguments: { idempotency_key: "ts-no-such-order-1" } });
  out.draftStatus = { isError: st.isError ?? false, code: st.structuredContent?.error?.code ?? null };
} catch (err) {
  out.draftStatus = rpcError(err);
}
await client.close();

try {
  const c = await connect(process.env.MCP_BAD_TOKEN);
  await c.listTools();
  out.badToken = { kind: "none" };
} catch (err) {
  out.badToken = rpcError(err);
}

process.stdout.write(JSON.stringify(out) + "\n");
