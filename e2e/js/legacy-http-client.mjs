// legacy-http-client.mjs: the TypeScript SDK v1 client
// (@modelcontextprotocol/sdk, MCP 2025-11-25) in the flow of
// http-client-flow.mjs, for TestClientsOfBothEras (e2e/clients_test.go;
// issue 26, point 6): an older client on the same endpoint as the
// 2026-07-28 ones. It initializes (a session), listens for list_changed on
// its GET event stream, and answers the confirmation as an
// elicitation/create request from the server.
//
//   node legacy-http-client.mjs ENDPOINT READ_SUFFIX READ_ARGS NEW_SUFFIX TEXT
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { run } from './http-client-flow.mjs';

await run(async (url, hooks) => {
  const client = new Client({ name: 'e2e-ts-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => hooks.asked(req.params.message));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => hooks.changed(null));
  const transport = new StreamableHTTPClientTransport(url, { fetch: hooks.fetch });
  await client.connect(transport);
  return {
    version: transport.protocolVersion,
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: (params) => client.callTool(params),
    // The transport opens its GET stream by itself after initialize.
    listen: () => hooks.streamOpen,
    facts: () => ({ sessionId: transport.sessionId ?? null }),
    close: () => client.close(),
  };
});
