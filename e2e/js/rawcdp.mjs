// rawcdp.mjs: raw CDP over a DevTools WebSocket, shared by compare-client.mjs
// and forwarder.mjs.

// cdpSocket opens a WebSocket to a DevTools target and returns a send
// function that resolves with a command's result.
export async function cdpSocket(wsURL) {
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
export async function rawCaller(browserURL, pageURL) {
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
