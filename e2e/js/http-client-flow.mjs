// http-client-flow.mjs: what the Node MCP clients of TestClientsOfBothEras
// (e2e/clients_test.go; issue 26, point 6) do against webmcp-cdp over
// streamable HTTP, whatever their SDK: legacy-http-client.mjs (the
// TypeScript SDK v1, MCP 2025-11-25) and
// e2e/testdata/ts-client-v2/client.mjs (the TypeScript SDK v2, 2026-07-28)
// give run() their SDK's client. It imports nothing, so that each of them
// resolves its own SDK from its own node_modules.
//
//   node SCRIPT ENDPOINT READ_SUFFIX READ_ARGS NEW_SUFFIX TEXT
//
// The client connects, lists the tools, calls the read-only page tool whose
// name ends in _READ_SUFFIX with the JSON object READ_ARGS (a 2026-07-28
// client mirrors the arguments its schema marks with x-mcp-header into
// Mcp-Param-* headers), starts listening for tools/list_changed and prints
// {"step":"ready",...}. Then, at each list_changed (the test opens a
// new tab whose page registers a tool ending in _NEW_SUFFIX), it lists
// again until that tool is there, and calls it with {text: TEXT}: webmcp-cdp
// runs with --confirm writes, so the server asks the client first (an input
// request or an elicitation request, by revision), and the client accepts.
// It prints {"step":"done",...} with what it saw, including the tools/call
// traffic on the wire (whether a request carried a requestState, its
// Mcp-Param-* headers, and the resultType of its answer), and exits 0; on any failure it prints
// {"step":"error","error":...} and exits 1.

const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');

const timeout = (ms, what) =>
  new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms).unref());

// resultType finds the resultType of the JSON-RPC result in a JSON body or
// in the data lines of an event stream ("complete" when it has none).
function resultType(raw) {
  const msgs = raw.trimStart().startsWith('{')
    ? [raw]
    : raw.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5));
  for (const m of msgs) {
    try {
      const msg = JSON.parse(m);
      if (msg.result) return msg.result.resultType ?? 'complete';
      if (msg.error) return `error ${msg.error.code}`;
    } catch {
      // not a message
    }
  }
  return 'none';
}

// hooks returns what a client reports to the flow: its fetch (which records
// the tools/call traffic and notes when a GET event stream opens), changed
// (a tools/list_changed, with its subscription id or null) and asked (a
// question, answered with accept).
function hooks() {
  const h = { wire: [], reads: [], changes: [], questions: [], unseen: 0, wake: () => {} };
  h.streamOpen = new Promise((resolve) => { h.openedStream = resolve; });
  h.fetch = async (url, init) => {
    const res = await fetch(url, init);
    if ((init?.method ?? 'GET') === 'GET' && res.ok) h.openedStream();
    let body;
    try {
      body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {
      body = undefined;
    }
    if (body?.method === 'tools/call') {
      const headers = new Headers(init.headers);
      const entry = {
        tool: body.params?.name,
        requestState: typeof body.params?.requestState === 'string' && body.params.requestState !== '',
        inputResponses: Object.keys(body.params?.inputResponses ?? {}),
        protocolVersionHeader: headers.get('mcp-protocol-version'),
        sessionHeader: headers.has('mcp-session-id'),
        paramHeaders: Object.fromEntries([...headers].filter(([k]) => k.startsWith('mcp-param-'))),
      };
      h.wire.push(entry);
      // Read a copy of the answer without holding the client back: on a
      // 2025-11-25 session the answer's stream carries the server's
      // question, which the client must answer before the stream ends.
      h.reads.push(res.clone().text().then(
        (raw) => { entry.resultType = resultType(raw); },
        () => { entry.resultType = 'unreadable'; },
      ));
    }
    return res;
  };
  h.changed = (subscriptionId) => {
    h.changes.push({ subscriptionId: subscriptionId ?? null });
    h.unseen++;
    h.wake();
  };
  // nextChange resolves at once when a list_changed came since it last
  // returned, else at the next one.
  h.nextChange = async () => {
    while (h.unseen === 0) await new Promise((resolve) => { h.wake = resolve; });
    h.unseen = 0;
  };
  h.asked = (message) => {
    h.questions.push(message);
    return { action: 'accept', content: {} };
  };
  return h;
}

// run runs the flow with the client that connect(url, hooks) returns:
// { version, listTools() (the names), callTool(params), listen() (resolves
// once list_changed will reach the client), facts() (what the SDK knows of
// the connection, for the report), close() }.
export async function run(connect) {
  const [endpoint, readSuffix, readArgs, newSuffix, text] = process.argv.slice(2);
  const h = hooks();
  try {
    const client = await connect(new URL(endpoint), h);
    const find = (names, suffix) => names.find((n) => n.endsWith('_' + suffix) && !n.startsWith('webmcp_'));

    const toolsBefore = await client.listTools();
    const readTool = find(toolsBefore, readSuffix);
    if (!readTool) throw new Error(`tools/list lacks a tool ending in _${readSuffix}: ${toolsBefore.join(', ')}`);
    const readResult = await client.callTool({ name: readTool, arguments: JSON.parse(readArgs) });
    await Promise.race([client.listen(), timeout(15000, 'the client to listen for list_changed')]);
    print({ step: 'ready', version: client.version });

    // A page registers its tools one at a time: each list_changed is
    // followed by a list, until the new tool is there.
    let toolsAfter = [];
    let newTool;
    const deadline = timeout(20000, `a tool ending in _${newSuffix} after list_changed (the new tab's)`);
    while (!newTool) {
      await Promise.race([h.nextChange(), deadline]);
      toolsAfter = await client.listTools();
      newTool = find(toolsAfter, newSuffix);
    }
    const confirmed = await client.callTool({ name: newTool, arguments: { text } });
    // The answers end with their results; a client that closes aborts
    // what is still in flight.
    await Promise.all(h.reads);
    const facts = client.facts();
    await client.close();
    print({
      step: 'done',
      version: client.version,
      ...facts,
      toolsBefore,
      readTool,
      readResult,
      changes: h.changes,
      toolsAfter,
      newTool,
      confirmed,
      questions: h.questions,
      wire: h.wire,
    });
    process.exit(0);
  } catch (err) {
    print({ step: 'error', error: String(err?.stack ?? err), wire: h.wire });
    process.exit(1);
  }
}
