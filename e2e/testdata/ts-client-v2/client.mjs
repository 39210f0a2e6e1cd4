// client.mjs: the TypeScript SDK v2 client (@modelcontextprotocol/client,
// MCP 2026-07-28) in the flow of e2e/js/http-client-flow.mjs, for
// TestClientsOfBothEras (e2e/clients_test.go; issue 26, point 6). It
// negotiates the revision itself (versionNegotiation auto: server/discover),
// listens for list_changed on a subscriptions/listen stream, and answers the
// confirmation, which comes as an input request in a tools/call result,
// through its elicitation handler (the SDK retries the call with the
// answer and the requestState).
//
//   node client.mjs ENDPOINT READ_SUFFIX READ_ARGS NEW_SUFFIX TEXT
import { Client, StreamableHTTPClientTransport, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/client';
import { run } from '../../js/http-client-flow.mjs';

await run(async (url, hooks) => {
  const client = new Client(
    { name: 'e2e-ts-v2', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('elicitation/create', async (req) => hooks.asked(req.params.message));
  client.setNotificationHandler('notifications/tools/list_changed', (n) => hooks.changed(n.params?._meta?.[SUBSCRIPTION_ID_META_KEY]));
  const transport = new StreamableHTTPClientTransport(url, { fetch: hooks.fetch });
  await client.connect(transport);
  let sub;
  return {
    version: client.getNegotiatedProtocolVersion(),
    // Lists are never fresh (ttlMs 0), but say so: a list after
    // list_changed must come from the server.
    listTools: async () => (await client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name),
    callTool: (params) => client.callTool(params),
    listen: async () => { sub = await client.listen({ toolsListChanged: true }); },
    facts: () => ({
      supportedVersions: client.getDiscoverResult()?.supportedVersions ?? null,
      sessionId: transport.sessionId ?? null,
      honoredFilter: sub?.honoredFilter ?? null,
    }),
    close: async () => {
      await sub?.close();
      await client.close();
    },
  };
});
