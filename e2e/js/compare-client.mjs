// compare-client.mjs: the same Node MCP client measures, in one loop, a
// tools/call through webmcp-cdp over stdio and a raw CDP
// Runtime.callFunctionOn over the browser's own WebSocket, into the same
// page of the same browser (issue 10: "a Node MCP client measured from
// outside ... must show ≤ 1.2×"). Run by BenchmarkNodeClient (e2e); it
// prints one line of JSON: the p50/p95 of both and their ratios.
//
//   node --experimental-websocket compare-client.mjs BIN BROWSER_URL PAGE_URL CALLS
//
// Node 20 needs --experimental-websocket for the global WebSocket.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [bin, browserURL, pageURL, callsArg] = process.argv.slice(2);
const calls = Number(callsArg || 200);

// cdpSocket opens a WebSocket to a DevTools target and returns a send
// function that resolves with a command's result.
async function cdpSocket(wsURL) {
  const ws = new WebSocket(wsURL);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error(`cannot open ${wsURL}`));
  });
  let next = 0;
  const waiting = new Map();
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.error) w.reject(new Error(msg.error.message));
    else w.resolve(msg.result);
  };
  const send = (method, params) => new Promise((resolve, reject) => {
    const id = ++next;
    waiting.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params }));
  });
  return { send, close: () => ws.close() };
}

// rawCaller opens a tab of its own on the page and returns a function that
// makes the call the Go bench makes raw (internal/bench/raw.go).
async function rawCaller() {
  const res = await fetch(`${browserURL}/json/new?${encodeURIComponent(pageURL)}`, { method: 'PUT' });
  if (!res.ok) throw new Error(`/json/new: ${res.status}`);
  const target = await res.json();
  const tab = await cdpSocket(target.webSocketDebuggerUrl);
  let objectId;
  for (let i = 0; i < 500 && !objectId; i++) {
    const r = await tab.send('Runtime.evaluate', {
      expression: "location.href !== 'about:blank' && document.readyState === 'complete' ? document : null",
    });
    objectId = r.result && r.result.objectId;
    if (!objectId) await new Promise((r) => setTimeout(r, 10));
  }
  if (!objectId) throw new Error('the raw tab did not load');
  const params = {
    functionDeclaration: 'async function(s){return JSON.stringify({ok:true,value:s})}',
    objectId,
    arguments: [{ value: 'x' }],
    awaitPromise: true,
    returnByValue: true,
  };
  return { call: () => tab.send('Runtime.callFunctionOn', params), close: tab.close };
}

// mcpCaller starts webmcp-cdp attached to the browser, on the page, and
// returns a function that calls the page's echo tool.
async function mcpCaller() {
  const transport = new StdioClientTransport({
    command: bin,
    args: ['attach', '--browser-url', browserURL, '--state-dir', '', pageURL],
    stderr: 'ignore',
    env: process.env,
  });
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
  if (!echo) throw new Error('webmcp-cdp did not list the page\'s echo_0 tool');
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

const raw = await rawCaller();
const mcp = await mcpCaller();
// Warm both paths, then alternate which goes first.
for (let i = 0; i < 20; i++) { await raw.call(); await mcp.call(); }
const rawT = [];
const mcpT = [];
const time = async (f, into) => {
  const t0 = performance.now();
  await f();
  into.push(performance.now() - t0);
};
for (let i = 0; i < calls; i++) {
  if (i % 2 === 0) { await time(raw.call, rawT); await time(mcp.call, mcpT); }
  else { await time(mcp.call, mcpT); await time(raw.call, rawT); }
}
const out = {
  rawP50: pct(rawT, 50), rawP95: pct(rawT, 95),
  stdioP50: pct(mcpT, 50), stdioP95: pct(mcpT, 95),
};
out.ratioP50 = out.stdioP50 / out.rawP50;
out.ratioP95 = out.stdioP95 / out.rawP95;
console.log(JSON.stringify(out));
await mcp.close();
raw.close();
process.exit(0);
