// meta-client.mjs: the TypeScript SDK v2 client (@modelcontextprotocol/client,
// MCP 2026-07-28) for TestPageServerMeta (e2e/pagemeta_test.go), as
// e2e/js/meta-client.mjs is the v1 one: it lists the tools, calls the first
// whose name ends with SUFFIX (the SDK checks the result's
// structuredContent against the tool's outputSchema), and prints
// {"step":"done","version":…,"tool":…,"result":…}, or
// {"step":"error","error":…}.
//
//   node meta-client.mjs ENDPOINT SUFFIX
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [endpoint, suffix] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
try {
  const client = new Client({ name: 'e2e-ts-v2-meta', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
  const { tools } = await client.listTools(undefined, { cacheMode: 'refresh' });
  const tool = tools.find((t) => t.name.endsWith(suffix));
  if (!tool) throw new Error(`no tool ends with ${suffix}: ${tools.map((t) => t.name).join(', ')}`);
  const result = await client.callTool({ name: tool.name, arguments: {} });
  out({ step: 'done', version: client.getNegotiatedProtocolVersion(), tool, result });
  await client.close();
} catch (err) {
  out({ step: 'error', error: String(err?.stack ?? err) });
}
process.exit(0);
