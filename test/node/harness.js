// Helpers shared by the end-to-end tests: free ports, polling, a deterministic model server
// and the agent run as a child process.
'use strict';
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, fn, log = () => '', timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${log().slice(-4000)}`);
    await sleep(100);
  }
}

// startJSONServer is a fake model API: answer(body, n) gives the JSON reply to the n-th request
// (from 1). A request with "stream": true gets that reply as server-sent events from
// toEvents(reply) (a list of [event, data]). It counts the requests it gets in
// server.requests and keeps their bodies in server.bodies; url is its address plus path.
function startJSONServer(answer, path = '/v1', toEvents) {
  return new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const n = ++server.requests;
        const body = JSON.parse(raw);
        server.bodies.push(body);
        const reply = answer(body, n);
        if (body.stream && toEvents) {
          res.setHeader('Content-Type', 'text/event-stream');
          res.end(toEvents(reply).map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
          return;
        }
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(reply));
      });
    });
    server.requests = 0;
    server.bodies = [];
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}${path}` }));
  });
}

// A deterministic OpenAI-compatible model: it asks for get_weather(Paris) until it sees a tool
// result, then answers with it. It counts the requests it gets.
function startModelServer() {
  return startJSONServer((body, n) => {
    const last = body.messages[body.messages.length - 1];
    const message = last.role === 'tool'
      ? { role: 'assistant', content: `Answer: based on ${last.content} it is mild in Paris.` }
      : { role: 'assistant', content: null, tool_calls: [{ id: `call_${n}_0`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' } }] };
    const finish = message.tool_calls ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: 70 + n, completion_tokens: 17, total_tokens: 87 + n };
    return { id: `chatcmpl-${n}`, object: 'chat.completion', created: 1764460800 + n, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage };
  });
}

// responsesEvents streams a Responses API reply the way OpenAI does: created, each output item
// added / its deltas / done, completed; every event numbered.
function responsesEvents(response) {
  const events = [['response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } }]];
  response.output.forEach((item, i) => {
    const base = { output_index: i, item_id: item.id };
    if (item.type === 'function_call') {
      events.push(['response.output_item.added', { output_index: i, item: { ...item, arguments: '', status: 'in_progress' } }]);
      events.push(['response.function_call_arguments.delta', { ...base, delta: item.arguments }]);
      events.push(['response.function_call_arguments.done', { ...base, arguments: item.arguments }]);
    } else {
      const text = item.content[0].text;
      events.push(['response.output_item.added', { output_index: i, item: { ...item, content: [], status: 'in_progress' } }]);
      events.push(['response.content_part.added', { ...base, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }]);
      events.push(['response.output_text.delta', { ...base, content_index: 0, delta: text }]);
      events.push(['response.output_text.done', { ...base, content_index: 0, text }]);
      events.push(['response.content_part.done', { ...base, content_index: 0, part: item.content[0] }]);
    }
    events.push(['response.output_item.done', { output_index: i, item }]);
  });
  events.push(['response.completed', { response }]);
  return events.map(([type, data], n) => [type, { type, sequence_number: n, ...data }]);
}

// messagesEvents streams an Anthropic Messages reply the way Anthropic does: message_start,
// each content block started / its delta / stopped, message_delta with the stop reason and
// usage, message_stop.
function messagesEvents(message) {
  const events = [['message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } }]];
  message.content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      events.push(['content_block_start', { index, content_block: { ...block, input: {} } }]);
      events.push(['content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }]);
    } else {
      events.push(['content_block_start', { index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }]);
    }
    events.push(['content_block_stop', { index }]);
  });
  events.push(['message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: message.usage.output_tokens } }]);
  events.push(['message_stop', {}]);
  return events.map(([type, data]) => [type, { type, ...data }]);
}

// startResponsesServer answers like the Responses API: two parallel get_weather calls, then,
// once their outputs come back, a text answer. Ids carry the request number.
function startResponsesServer() {
  return startJSONServer((body, n) => {
    const last = body.input[body.input.length - 1];
    const output = last.type === 'function_call_output'
      ? [{ type: 'message', id: `msg_${n}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Paris and Lyon: 14 and overcast.', annotations: [] }] }]
      : ['Paris', 'Lyon'].map((city, i) => ({ type: 'function_call', id: `fc_${n}_${i}`, call_id: `call_${n}_${i}`, name: 'get_weather', arguments: JSON.stringify({ city }), status: 'completed' }));
    return { id: `resp_${n}`, object: 'response', created_at: 1764460800 + n, status: 'completed', model: 'gpt-4.1-mini-2025-04-14', output,
      parallel_tool_calls: true, usage: { input_tokens: 50 + n, output_tokens: 20, total_tokens: 70 + n, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } };
  }, '/v1', responsesEvents);
}

// startMessagesServer answers like the Messages API: two parallel get_weather tool_use blocks,
// then, once their results come back, a text answer. Ids carry the request number.
function startMessagesServer() {
  return startJSONServer((body, n) => {
    const last = body.messages[body.messages.length - 1];
    const answered = Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result');
    const content = answered ? [{ type: 'text', text: 'Paris and Lyon: 14 and overcast.' }]
      : ['Paris', 'Lyon'].map((city, i) => ({ type: 'tool_use', id: `toolu_${n}_${i}`, name: 'get_weather', input: { city } }));
    return { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-haiku-4-5-20251001', content,
      stop_reason: answered ? 'end_turn' : 'tool_use', stop_sequence: null, usage: { input_tokens: 40 + n, output_tokens: 15, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } };
  }, '', messagesEvents);
}

// startEmbeddingsServer answers embeddings requests with a fixed 4-dimensional vector per input
// (values a float32 holds exactly, so float and base64 answers decode to the same numbers) and
// Responses requests with a text answer naming the instructions it was given.
function startEmbeddingsServer() {
  return startJSONServer((body, n) => {
    if (body.model.startsWith('text-embedding')) {
      const vectors = body.input.map((text, i) => [0.5, -0.25, 0.125 * (i + 1), text.length / 64]);
      const data = vectors.map((v, index) => ({ object: 'embedding', index,
        embedding: body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v }));
      return { object: 'list', data, model: 'text-embedding-3-small', usage: { prompt_tokens: 20, total_tokens: 20 } };
    }
    const text = `From "${body.instructions}": mild.`;
    return { id: `resp_${n}`, object: 'response', created_at: 1764460800 + n, status: 'completed', model: 'gpt-4.1-mini-2025-04-14',
      output: [{ type: 'message', id: `msg_${n}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
      usage: { input_tokens: 30, output_tokens: 8, total_tokens: 38, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } };
  });
}

// runAgent runs an agent script (default agent.js) with env added and resolves with the JSON
// it prints last.
function runAgent(env, script = 'agent.js') {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(__dirname, script)], { env: { ...process.env, ...env }, timeout: 60000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`agent failed: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

async function getJSON(url) {
  const res = await fetch(url);
  if (!res.ok) return undefined;
  return res.json();
}

// recordingConfig is a collector config that records agent runs: OTLP/HTTP on otlpPort, every
// run a case in the dataset at dir; with replayPort, the replay extension serves that dataset
// (replayExtra is more YAML for it, indented four spaces).
function recordingConfig({ otlpPort, dir, replayPort, replayExtra = '', queue = 'enabled: false' }) {
  const replay = replayPort ? `
extensions:
  replay:
    endpoint: 127.0.0.1:${replayPort}
    directory: ${dir}
    refresh_interval: 200ms
${replayExtra}` : '';
  return `${replay}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlpPort}
processors:
  replay_case:
    root_grace_period: 300ms
exporters:
  replay_parquet:
    directory: ${dir}
    sending_queue:
      ${queue}
  nop:
service:
  ${replayPort ? 'extensions: [replay]' : ''}
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [replay_parquet]
    logs:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [nop]
`;
}

// startCollector runs the collector (bin) with the replay extension and an OTLP receiver
// writing cases into workDir/data; replayExtra is more YAML for the extension (indented four
// spaces). It resolves once the replay extension answers.
async function startCollector(bin, workDir, replayExtra = '') {
  const [otlpPort, replayPort] = [await freePort(), await freePort()];
  const config = recordingConfig({ otlpPort, dir: `${workDir}/data`, replayPort, replayExtra, queue: 'batch:\n        flush_timeout: 300ms' });
  fs.writeFileSync(path.join(workDir, 'config.yaml'), config);
  const proc = spawn(bin, ['--config', path.join(workDir, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const c = { proc, otlp: `http://127.0.0.1:${otlpPort}`, replayURL: `http://127.0.0.1:${replayPort}`, log: '' };
  proc.stdout.on('data', (d) => (c.log += d));
  proc.stderr.on('data', (d) => (c.log += d));
  c.stop = () => new Promise((r) => { if (proc.exitCode !== null) r(); else { proc.on('exit', r); proc.kill('SIGTERM'); } });
  await waitFor('the collector', () => getJSON(`${c.replayURL}/v1/cases`), () => c.log);
  return c;
}

// makeWorkDir makes a temporary directory for one test file, removed when its process exits
// (node --test runs each file in a process of its own): directories left behind by every run
// once filled a shared CI disk.
function makeWorkDir(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `reprise-${name}-`));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

module.exports = { makeWorkDir, freePort, sleep, waitFor, startJSONServer, responsesEvents, messagesEvents, startModelServer, startResponsesServer, startMessagesServer, startEmbeddingsServer, runAgent, getJSON, recordingConfig, startCollector };
