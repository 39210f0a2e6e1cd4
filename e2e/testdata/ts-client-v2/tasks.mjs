// tasks.mjs: the TypeScript SDK v2 client (@modelcontextprotocol/client,
// MCP 2026-07-28) with the Tasks extension, for TestTasks (e2e/tasks_test.go;
// issue 40). The client declares io.modelcontextprotocol/tasks; its
// tools/call cannot decode a CreateTaskResult (2.4.0 knows no resultType
// "task"), so the result is read off the wire through the transport's
// fetch, and tasks/get, tasks/update and tasks/cancel go through
// client.request with a schema of their own. It prints one JSON line per
// step: {"step":"<name>", ...} or {"step":"error","error":...}.
//
//   node tasks.mjs ENDPOINT
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const endpoint = process.argv[2];
const TASKS = 'io.modelcontextprotocol/tasks';
const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');
// A Standard Schema that takes any result as it is.
const anyResult = { '~standard': { version: 1, vendor: 'e2e', validate: (value) => ({ value }) } };

// connect returns a client, declaring the Tasks extension when tasks is
// set, and the last tools/call result as it came off the wire.
async function connect(tasks) {
  const wire = { last: null };
  const fetchAndKeep = async (url, init) => {
    const res = await fetch(url, init);
    let method;
    try { method = JSON.parse(init?.body ?? '{}').method; } catch {}
    if (method === 'tools/call') {
      const text = (await res.clone().text()).trim();
      const datas = text.startsWith('{') ? [text] : text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5));
      for (const d of datas) {
        try { const msg = JSON.parse(d); if (msg.result) wire.last = msg.result; } catch {}
      }
    }
    return res;
  };
  const capabilities = { elicitation: { form: {} } };
  if (tasks) capabilities.extensions = { [TASKS]: {} };
  const client = new Client({ name: tasks ? 'e2e-tasks' : 'e2e-no-tasks', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { fetch: fetchAndKeep }));
  const names = (await client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name);
  const tool = (suffix) => names.find((n) => n.endsWith('_' + suffix));
  return { client, wire, tool };
}

// startTask calls a tool and returns the CreateTaskResult it answered.
async function startTask(c, suffix, args = {}) {
  c.wire.last = null;
  try {
    await c.client.callTool({ name: c.tool(suffix), arguments: args });
  } catch {
    // 2.4.0 refuses resultType "task": the wire has it.
  }
  if (c.wire.last?.resultType !== 'task') throw new Error(`${suffix} was not made a task: ${JSON.stringify(c.wire.last)}`);
  return c.wire.last;
}

const get = (c, taskId) => c.client.request({ method: 'tasks/get', params: { taskId } }, anyResult);

// until polls tasks/get, at the task's pollIntervalMs, until ok(task).
async function until(c, taskId, ok, what) {
  for (let i = 0; i < 200; i++) {
    const t = await get(c, taskId);
    if (ok(t)) return t;
    if (['completed', 'failed', 'cancelled'].includes(t.status)) throw new Error(`task ${taskId} ended ${t.status} before ${what}: ${JSON.stringify(t)}`);
    await new Promise((r) => setTimeout(r, t.pollIntervalMs ?? 200));
  }
  throw new Error(`task ${taskId}: no ${what} in 200 polls`);
}

const textOf = (res) => (res?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join(' ');

try {
  const c = await connect(true);
  print({ step: 'connected', version: c.client.getNegotiatedProtocolVersion(), extension: !!c.client.getDiscoverResult()?.capabilities?.extensions?.[TASKS] });

  // A 3 s tool becomes a task, polled to completed.
  let made = await startTask(c, 'slow_report');
  let done = await until(c, made.taskId, (t) => t.status === 'completed', 'completed');
  print({ step: 'polled', created: made.status, status: done.status, text: textOf(done.result) });

  // A tool cancelled mid-run: the page's toolcancel, the task cancelled.
  made = await startTask(c, 'long_export');
  const ack = await c.client.request({ method: 'tasks/cancel', params: { taskId: made.taskId } }, anyResult);
  const after = await get(c, made.taskId);
  let seen = '';
  for (let i = 0; i < 100 && !seen.includes('long_export'); i++) {
    seen = textOf(await c.client.callTool({ name: c.tool('cancels'), arguments: {} }));
    if (!seen.includes('long_export')) await new Promise((r) => setTimeout(r, 100));
  }
  print({ step: 'cancelled', ack, status: after.status, pageSaw: seen });

  // requestUserInteraction inside a task: input_required, answered with
  // tasks/update, then completed.
  made = await startTask(c, 'place_order');
  const asking = await until(c, made.taskId, (t) => t.status === 'input_required', 'input_required');
  const keys = Object.keys(asking.inputRequests ?? {});
  const answers = Object.fromEntries(keys.map((k) => [k, { action: 'accept', content: { confirm: true } }]));
  const upd = await c.client.request({ method: 'tasks/update', params: { taskId: made.taskId, inputResponses: answers } }, anyResult);
  done = await until(c, made.taskId, (t) => t.status === 'completed', 'completed');
  print({ step: 'answered', keys, method: asking.inputRequests?.[keys[0]]?.method, ack: upd, status: done.status, text: textOf(done.result) });
  await c.client.close();

  // A client without the extension: a plain result, in its request.
  const plain = await connect(false);
  const res = await plain.client.callTool({ name: plain.tool('slow_report'), arguments: {} });
  print({ step: 'plain', resultType: plain.wire.last?.resultType, taskId: plain.wire.last?.taskId ?? null, text: textOf(res) });
  await plain.client.close();

  // A task dies with its tab: failed, with the reason.
  const d = await connect(true);
  made = await startTask(d, 'long_export');
  await d.client.callTool({ name: 'webmcp_close_tab', arguments: { tab: 1 } });
  const failed = await until(d, made.taskId, (t) => t.status === 'failed', 'failed').catch((e) => ({ status: String(e) }));
  print({ step: 'tab closed', status: failed.status, error: failed.error ?? null });
  await d.client.close();
  print({ step: 'done' });
} catch (e) {
  print({ step: 'error', error: String(e?.stack ?? e) });
}
