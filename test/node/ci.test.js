// `reprise ci` end to end: record a real agent run (the openai SDK under the official OTel
// instrumentation, with a retrieval and a tool call) through the collector, then replay the
// dataset through the same agent with `reprise ci`. Unchanged, every case passes with zero
// model calls; changed (system prompt, model parameter, tool result, retriever), it fails with
// exactly the findings that change explains. Needs REPRISE_BIN (scripts/test.sh builds it).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { freePort, waitFor, startModelServer, runAgent, recordingConfig, makeWorkDir } = require('./harness');

const bin = process.env.REPRISE_BIN;
const agentEnv = { INSTRUMENTATION: 'otel', RETRIEVAL: '1', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', SERVICE_NAME: 'weather-agent-ci' };
let workDir, dataset, model;

function reprise(args, env = {}) {
  return new Promise((resolve) => {
    execFile(bin, args, { env: { ...process.env, ...env }, timeout: 120000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr });
    });
  });
}

before(async () => {
  assert.ok(bin && fs.existsSync(bin), 'set REPRISE_BIN to the collector built from this repository');
  workDir = makeWorkDir('ci');
  dataset = path.join(workDir, 'data');
  const otlpPort = await freePort();
  fs.writeFileSync(path.join(workDir, 'config.yaml'), recordingConfig({ otlpPort, dir: dataset }));
  let log = '';
  const collector = spawn(bin, ['--config', path.join(workDir, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  collector.stdout.on('data', (d) => (log += d));
  collector.stderr.on('data', (d) => (log += d));
  await waitFor('the collector', () => fetch(`http://127.0.0.1:${otlpPort}/`).then(() => true), () => log);
  model = await startModelServer();
  const recorded = await runAgent({ ...agentEnv, OTLP_ENDPOINT: `http://127.0.0.1:${otlpPort}`, OPENAI_BASE_URL: model.url });
  assert.equal(recorded.error, undefined);
  await waitFor('the recorded case', async () => {
    const ls = await reprise(['ls', '--dataset', dataset, '--status', 'accepted']);
    return ls.stdout.includes('weather-bot');
  }, () => log);
  collector.kill('SIGTERM');
  await new Promise((r) => collector.on('exit', r));
  model.requestsWhenRecorded = model.server.requests;
});

after(() => model && model.server.close());

async function ci(variant, flags = []) {
  const report = path.join(workDir, `report-${[...flags, ...Object.keys(variant)].join('-').replace(/[^\w-]/g, '_') || 'unchanged'}.json`);
  const junit = report.replace(/\.json$/, '.xml');
  const res = await reprise(['ci', '--dataset', dataset, '--json', report, '--junit', junit, ...flags, '--', process.execPath, path.join(__dirname, 'agent.js')],
    { ...agentEnv, ...variant });
  const parsed = fs.existsSync(report) ? JSON.parse(fs.readFileSync(report, 'utf8')) : undefined;
  return { ...res, report: parsed, junit: fs.existsSync(junit) ? fs.readFileSync(junit, 'utf8') : '' };
}

function failingTypes(report) {
  return [...new Set(report.results.flatMap((r) => r.failing.map((f) => f.type)))].sort();
}

test('the unchanged agent passes every case with zero model calls', async () => {
  const res = await ci({});
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.report.cases, 1);
  assert.equal(res.report.passed, 1, JSON.stringify(res.report.results[0], null, 1));
  assert.match(res.stderr, /1 cases, 1 passed, 0 failed, 0 errors/);
  assert.match(res.junit, /<testsuites name="reprise ci" tests="1" failures="0" errors="0"/);
  assert.equal(model.server.requests, model.requestsWhenRecorded, 'no request reached the model server');
});

// Each change, and the findings it must produce. In strict replay a changed model request gets
// no recorded answer (replay_miss), so the agent stops there: the calls after it are reported
// missing.
const changes = [
  { name: 'a different system prompt', env: { SYSTEM_PROMPT: 'You are a terse weather assistant.' },
    want: ['answer_changed', 'model_call_removed', 'prompt_changed', 'replay_miss', 'tool_call_removed'] },
  { name: 'a different model parameter', env: { TEMPERATURE: '0.7' },
    want: ['answer_changed', 'model_call_removed', 'model_config_changed', 'replay_miss', 'tool_call_removed'] },
  { name: 'a tool that returns something else', env: { TOOL_SKY: 'sunny' },
    want: ['answer_changed', 'replay_miss', 'tool_result_changed'] },
  { name: 'a retriever returning other documents', env: { DOCS: 'doc-lyon-climate,doc-paris-climate' },
    want: ['retrieval_drift'] },
];

for (const change of changes) {
  test(`${change.name} fails with exactly ${change.want.join(', ')}`, async () => {
    const res = await ci(change.env);
    assert.equal(res.code, 1, res.stderr);
    assert.deepEqual(failingTypes(res.report), change.want, JSON.stringify(res.report.results[0].failing, null, 1));
    assert.match(res.junit, /<failure message="[^"]*findings: /);
    assert.equal(model.server.requests, model.requestsWhenRecorded, 'no request reached the model server');
  });
}

// Hybrid replay: the model server is the upstream. Unchanged, nothing reaches it; changed, the
// run goes live at its first divergence and stays live, so it runs to the end instead of
// stopping at the miss, and the new case names the recorded one in metadata derived_from.
test('hybrid: the unchanged agent passes with zero upstream calls', async () => {
  const before = model.server.requests;
  const res = await ci({}, ['--mode', 'hybrid', '--upstream', model.url]);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.report.passed, 1, JSON.stringify(res.report.results[0], null, 1));
  assert.equal(model.server.requests, before, 'no request reached the upstream');
});

test('hybrid: a changed prompt goes live at the first call and stays live', async () => {
  const before = model.server.requests;
  const record = path.join(workDir, 'hybrid-runs');
  const res = await ci({ SYSTEM_PROMPT: 'You are a terse weather assistant.' }, ['--mode', 'hybrid', '--upstream', model.url, '--record', record]);
  assert.equal(res.code, 1, res.stderr);
  const result = res.report.results[0];
  assert.equal(model.server.requests - before, 2, 'both model calls of the run went live: ' + result.stdout);
  const out = JSON.parse(result.stdout.trim().split('\n').pop());
  assert.equal(out.error, undefined);
  assert.match(out.answer, /^Answer: based on /, 'the live run ran to its answer');
  const types = failingTypes(res.report);
  assert.ok(types.includes('prompt_changed'), types.join());
  assert.ok(!types.includes('model_call_removed'), 'the run did not stop at the miss: ' + types.join());
  const ls = await reprise(['ls', '--dataset', record, '--metadata', `derived_from=${result.case_id}`]);
  assert.equal(ls.code, 0, ls.stderr);
  assert.ok(ls.stdout.includes(result.new_case_id), 'the live case is linked to the recorded one: ' + ls.stdout);
});

test('hybrid: --mode hybrid without --upstream is a usage error', async () => {
  const res = await reprise(['ci', '--dataset', dataset, '--mode', 'hybrid', '--', 'true']);
  assert.equal(res.code, 2);
  assert.match(res.stderr, /--mode hybrid needs --upstream URL/);
});

// The mutate story: a case whose tool result was edited replays up to the edit, then goes live.
test('hybrid: a mutated tool result replays up to the edit, then goes live', async () => {
  const original = (await ci({})).report.results[0].case_id;
  const show = await reprise(['show', original, '--dataset', dataset]);
  const step = Number(show.stdout.match(/#(\d+) tool\s/)[1]);
  const mutatedData = path.join(workDir, 'mutated');
  const mutate = await reprise(['mutate', original, '--step', String(step), '--dataset', dataset, '--out', mutatedData,
    '--tool-result', '{"city":"Paris","temperature":-5,"unit":"celsius","sky":"snow"}']);
  assert.equal(mutate.code, 0, mutate.stderr);
  const mutated = mutate.stdout.trim();
  const before = model.server.requests;
  const report = path.join(workDir, 'report-mutated.json');
  const res = await reprise(['ci', '--dataset', mutatedData, '--json', report, '--mode', 'hybrid', '--upstream', model.url,
    '--', process.execPath, path.join(__dirname, 'agent.js')], { ...agentEnv, TOOLS_FROM_REPLAY: '1' });
  const result = JSON.parse(fs.readFileSync(report, 'utf8')).results[0];
  assert.equal(result.case_id, mutated);
  const out = JSON.parse(result.stdout.trim().split('\n').pop());
  assert.equal(out.error, undefined, res.stderr);
  assert.match(out.toolCalls[0].result, /snow/, 'the edited tool result was served');
  assert.equal(model.server.requests - before, 1, 'the first model call replayed; the one after the edit went live');
  assert.match(out.answer, /snow/, 'the live model saw the edited result');
});
