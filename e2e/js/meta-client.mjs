// meta-client.mjs: the TypeScript SDK v1 client (@modelcontextprotocol/sdk,
// MCP 2025-11-25) for TestPageServerMeta (e2e/pagemeta_test.go): it lists
// the tools, calls the first whose name ends with SUFFIX (the SDK checks
// the result's structuredContent against the tool's outputSchema), and
// prints {"step":"done","tool":…,"result":…} as the client read them, or
// {"step":"error","error":…}.
//
//   node meta-client.mjs ENDPOINT SUFFIX
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [endpoint, suffix] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
try {
  const client = new Client({ name: 'e2e-ts-meta', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name.endsWith(suffix));
  if (!tool) throw new Error(`no tool ends with ${suffix}: ${tools.map((t) => t.name).join(', ')}`);
  const result = await client.callTool({ name: tool.name, arguments: {} });
  out({ step: 'done', tool, result });
  await client.close();
} catch (err) {
  out({ step: 'error', error: String(err?.stack ?? err) });
}
process.exit(0);
