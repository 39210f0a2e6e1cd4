// forwarder.mjs: the floor of compare-client.mjs. A minimal MCP server
// over stdio, hand-written (no SDK, no validation, no routing), with one
// tool, "forwarder_echo_0", whose every call is one raw
// Runtime.callFunctionOn into a tab of its own on the page, over the
// browser's WebSocket, as the raw caller of compare-client.mjs makes it.
// Issue 10 measured such a forwarder at 1.17–1.23× the raw call;
// compare-client.mjs measures it in the same loop as the raw call and
// webmcp-cdp.
//
//   node --experimental-websocket forwarder.mjs BROWSER_URL PAGE_URL
import { createInterface } from 'node:readline';
import { rawCaller } from './rawcdp.mjs';

const [browserURL, pageURL] = process.argv.slice(2);
const raw = await rawCaller(browserURL, pageURL);
const write = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');

for await (const line of createInterface({ input: process.stdin })) {
  let msg;
  try { msg = JSON.parse(line); } catch { continue; }
  if (msg.id === undefined) continue; // a notification
  switch (msg.method) {
    case 'initialize':
      write({ jsonrpc: '2.0', id: msg.id, result: {
        protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
        serverInfo: { name: 'forwarder', version: '1.0.0' } } });
      break;
    case 'tools/list':
      write({ jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 'forwarder_echo_0', inputSchema: { type: 'object' } }] } });
      break;
    case 'tools/call':
      raw.call().then((r) => {
        write({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: r.result.value }] } });
      }, (err) => {
        write({ jsonrpc: '2.0', id: msg.id, error: { code: -32603, message: String(err) } });
      });
      break;
    default:
      write({ jsonrpc: '2.0', id: msg.id, result: {} });
  }
}
raw.close();
