// Helpers shared by the end-to-end tests: free ports, polling, a deterministic model server
// and the agent run as a child process.
'use strict';
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
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
// (from 1). It counts the requests it gets in server.requests; url is its address plus path.
function startJSONServer(answer, path = '/v1') {
  return new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const n = ++server.requests;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(answer(JSON.parse(raw), n)));
      });
    });
    server.requests = 0;
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

module.exports = { freePort, sleep, waitFor, startJSONServer, startModelServer, runAgent, getJSON, recordingConfig, startCollector };
