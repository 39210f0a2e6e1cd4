// compare-client.mjs: the same Node MCP client measures, in one loop, a
// tools/call through webmcp-cdp over stdio, a raw CDP
// Runtime.callFunctionOn over the browser's own WebSocket, and a tools/call
// through a minimal forwarder (forwarder.mjs: one raw call per tools/call,
// no SDK), into the same page of the same browser (issue 10: "a Node MCP
// client measured from outside ... must show ≤ 1.2×: a minimal forwarder
// reaches 1.17–1.23"). Run by BenchmarkNodeClient (e2e); it prints one line
// of JSON: the p50/p95 of each and their ratios to raw.
//
//   node --experimental-websocket compare-client.mjs BIN BROWSER_URL PAGE_URL CALLS
//
// Node 20 needs --experimental-websocket for the global WebSocket.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { rawCaller } from './rawcdp.mjs';

const [bin, browserURL, pageURL, callsArg] = process.argv.slice(2);
const calls = Number(callsArg || 200);

// mcpCaller starts an MCP server over stdio (webmcp-cdp attached to the
// browser, or the forwarder) and returns a function that calls the page's
// echo tool.
async function mcpCaller(command, args) {
  const transport = new StdioClientTransport({ command, args, stderr: 'ignore', env: process.env });
  const client = new Client({ name: 'compare-client', version: '1.0.0' });
  let changed = () => {};
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
  await client.connect(transport);
  let echo;
  for (let i = 0; i < 100 && !echo; i++) {
    const wake = new Promise((resolve) => { changed = resolve; setTimeout(resolve, 200); });
    const { tools } = await client.listTools();
    echo = tools.find((t) => t.name.endsWith('_echo_0'));
    if (!echo) await wake;
  }
  if (!echo) throw new Error(`${command} did not list the page's echo_0 tool`);
  const params = { name: echo.name, arguments: { text: 'x' } };
  return {
    call: async () => {
      const r = await client.callTool(params);
      if (r.isError) throw new Error(`tools/call answered with an error: ${JSON.stringify(r.content)}`);
    },
    close: () => client.close(),
  };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const raw = await rawCaller(browserURL, pageURL);
const mcp = await mcpCaller(bin, ['attach', '--browser-url', browserURL, '--state-dir', '', pageURL]);
const fwd = await mcpCaller(process.execPath, ['--experimental-websocket', '--no-warnings',
  new URL('./forwarder.mjs', import.meta.url).pathname, browserURL, pageURL]);
const sides = [
  { name: 'raw', call: raw.call, t: [] },
  { name: 'stdio', call: mcp.call, t: [] },
  { name: 'forwarder', call: fwd.call, t: [] },
];
// Warm every path, then rotate which goes first.
for (let i = 0; i < 20; i++) for (const s of sides) await s.call();
for (let i = 0; i < calls; i++) {
  for (let j = 0; j < sides.length; j++) {
    const s = sides[(i + j) % sides.length];
    const t0 = performance.now();
    await s.call();
    s.t.push(performance.now() - t0);
  }
}
const [rawT, mcpT, fwdT] = sides.map((s) => s.t);
const out = {
  rawP50: pct(rawT, 50), rawP95: pct(rawT, 95),
  stdioP50: pct(mcpT, 50), stdioP95: pct(mcpT, 95),
  forwarderP50: pct(fwdT, 50), forwarderP95: pct(fwdT, 95),
};
out.ratioP50 = out.stdioP50 / out.rawP50;
out.ratioP95 = out.stdioP95 / out.rawP95;
out.forwarderRatioP50 = out.forwarderP50 / out.rawP50;
console.log(JSON.stringify(out));
await mcp.close();
await fwd.close();
raw.close();
process.exit(0);
