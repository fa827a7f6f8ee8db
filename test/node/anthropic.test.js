// The Anthropic Messages API end to end: an agent on the real @anthropic-ai/sdk (two parallel
// tool_use blocks, then an answer), recorded through the collector from the SDK's own
// OpenTelemetry spans (content mode), under OpenInference and under OpenLLMetry, replayed through the replay
// extension with messages.create and messages.stream, the model server counting every call it
// gets. Needs REPRISE_BIN (scripts/test.sh builds it).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { waitFor, getJSON, startCollector, startMessagesServer, runAgent: harnessRunAgent, makeWorkDir } = require('./harness');

const bin = process.env.REPRISE_BIN;
let collector, model;

const runAgent = (env) => harnessRunAgent(env, 'anthropic-agent.js');

// recordRun runs the agent with env against the model server, recorded through the collector as
// service, and returns what it did and the summary of its case (whatever its status).
async function recordRun(service, env) {
  const recorded = await runAgent({ ...env, OTLP_ENDPOINT: collector.otlp, SERVICE_NAME: service, ANTHROPIC_BASE_URL: model.url });
  assert.equal(recorded.error, undefined);
  const summary = await waitFor(`the case of ${service}`, async () => {
    const list = await getJSON(`${collector.replayURL}/v1/cases?status=`);
    return list && list.cases.find((c) => c.provenance.service_name === service);
  }, () => collector.log);
  return { recorded, summary };
}

before(async () => {
  assert.ok(bin && fs.existsSync(bin), 'set REPRISE_BIN to the collector built from this repository');
  model = await startMessagesServer();
  const workDir = makeWorkDir('anthropic');
  collector = await startCollector(bin, workDir, `    upstream:
      anthropic:
        endpoint: ${model.url}`);
});

after(async () => {
  if (collector) await collector.stop();
  if (model) model.server.close();
});

test('anthropic SDK telemetry: a recorded run replays through messages.create and messages.stream', async () => {
  const recorded = await runAgent({ OTLP_ENDPOINT: collector.otlp, SERVICE_NAME: 'anthropic-sdk', ANTHROPIC_BASE_URL: model.url, ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE: 'content' });
  assert.equal(recorded.error, undefined);
  assert.deepEqual(recorded.toolCalls.map((c) => c.id), ['toolu_1_0', 'toolu_1_1']);
  const summary = await waitFor('the case of anthropic-sdk', async () => {
    const list = await getJSON(`${collector.replayURL}/v1/cases`);
    return list && list.cases.find((c) => c.provenance.service_name === 'anthropic-sdk');
  }, () => collector.log);
  assert.equal(summary.status, 'accepted', JSON.stringify(summary.reasons));
  const calls = model.server.requests;
  const base = `${collector.replayURL}/v1/cases/${summary.case_id}/anthropic`;
  for (const stream of ['0', '1']) {
    const replayed = await runAgent({ STREAM: stream, REPLAY_SESSION: `an-${stream}`, ANTHROPIC_BASE_URL: base });
    assert.deepEqual(replayed, recorded, `stream=${stream}: the same tool_use ids, inputs, answer and message id`);
  }
  assert.equal(model.server.requests, calls, 'zero upstream calls');

  // Hybrid: a changed system prompt goes live at the first call and stays live.
  const hybrid = await runAgent({ SYSTEM_PROMPT: 'You are terse.', REPLAY_SESSION: 'an-hybrid', REPLAY_MODE: 'hybrid', ANTHROPIC_BASE_URL: base });
  assert.equal(hybrid.error, undefined, JSON.stringify(hybrid.error));
  assert.equal(model.server.requests - calls, 2, 'both calls of the session went live');
  assert.equal(hybrid.answer, recorded.answer);
  const divs = await getJSON(`${collector.replayURL}/v1/divergences?session=an-hybrid`);
  assert.deepEqual(divs.divergences.map((d) => [d.live, d.findings.map((f) => f.type)]), [[true, ['prompt_changed']]]);
});

test('anthropic: a miss is an Anthropic-shaped error the SDK raises with its message', async () => {
  const list = await getJSON(`${collector.replayURL}/v1/cases`);
  const found = list.cases.find((c) => c.provenance.service_name === 'anthropic-sdk');
  const res = await runAgent({ SYSTEM_PROMPT: 'You are terse.', REPLAY_SESSION: 'an-strict', ANTHROPIC_BASE_URL: `${collector.replayURL}/v1/cases/${found.case_id}/anthropic` });
  assert.equal(res.error.status, 404);
  const body = JSON.parse(res.error.message.replace(/^404 /, ''));
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'not_found_error');
  assert.deepEqual(body.error.paths, ['messages[0].content[0].text']);
});

// Structured output (output_config.format), recorded by OpenInference (the request's
// output_config in llm.invocation_parameters) and by the SDK's own spans (gen_ai.output.type
// json): a replay asking for the same format is answered; one asking for none is a strict 404
// naming the fields by name (not the whole request), in the error and in the divergence log,
// and never quoting the schema.
test('anthropic structured output: replayed for the same format, a miss names the field', async () => {
  const format = JSON.stringify({ type: 'json_schema', schema: { type: 'object', properties: { temp_c: { type: 'number' } } } });
  const { recorded, summary } = await recordRun('anthropic-structured', { INSTRUMENTATION: 'openinference', OUTPUT_FORMAT: format });
  assert.equal(summary.status, 'accepted', JSON.stringify(summary.reasons));
  const full = await getJSON(`${collector.replayURL}/v1/cases/${summary.case_id}`);
  for (const st of full.steps.filter((s) => s.kind === 'llm')) {
    assert.equal(st.model_config.output_type, 'json');
    assert.deepEqual(JSON.parse(st.model_config.response_format), JSON.parse(format));
  }
  const calls = model.server.requests;
  const base = `${collector.replayURL}/v1/cases/${summary.case_id}/anthropic`;
  for (const stream of ['0', '1']) {
    const replayed = await runAgent({ OUTPUT_FORMAT: format, STREAM: stream, REPLAY_SESSION: `structured-${stream}`, ANTHROPIC_BASE_URL: base });
    assert.deepEqual(replayed, recorded, `stream=${stream}`);
  }
  assert.equal(model.server.requests, calls, 'zero upstream calls');

  const res = await runAgent({ REPLAY_SESSION: 'structured-none', ANTHROPIC_BASE_URL: base });
  assert.equal(res.error.status, 404);
  const body = JSON.parse(res.error.message.replace(/^404 /, ''));
  assert.deepEqual(body.error.paths, ['output_type', 'response_format']);
  assert.doesNotMatch(res.error.message, /temp_c/);
  const divs = await getJSON(`${collector.replayURL}/v1/divergences?session=structured-none`);
  assert.deepEqual(divs.divergences.map((d) => [d.refused, d.paths]), [[true, ['output_type', 'response_format']]]);
  assert.doesNotMatch(JSON.stringify(divs), /temp_c/);
});

// Under another instrumentation the SDK still emits its own content-less span for each call,
// nested under that instrumentation's span or beside it over the same time: each call is still
// one model step, so the case is accepted and replays with the recorded ids, JSON and stream.
// OpenInference (@arizeai/openinference-instrumentation-anthropic 0.2.8) runs on the pinned
// SDK 1.14.0; OpenLLMetry (@traceloop/instrumentation-anthropic 0.27.0) only on 0.x, here
// 0.137.0 (the last 0.x, which emits its own spans too).
// With the SDK's content mode on too, both spans of a call carry the content: still one step.
const underOthers = [
  { instrumentation: 'openinference', sdk: '', content: '', streams: ['0', '1'] },
  { instrumentation: 'openinference', sdk: '', content: 'content', streams: ['0', '1'] },
  { instrumentation: 'traceloop', sdk: '0', content: '', streams: ['0'] },
];
for (const { instrumentation, sdk, content, streams } of underOthers) for (const recordStream of streams) {
  test(`${instrumentation}${content ? ' with the SDK content mode' : ''}: a run recorded with ${recordStream === '1' ? 'messages.stream' : 'messages.create'} replays, one model step per call`, async () => {
    const service = `anthropic-${instrumentation}-${content}-${recordStream}`;
    const { recorded, summary } = await recordRun(service, { INSTRUMENTATION: instrumentation, ANTHROPIC_SDK: sdk, STREAM: recordStream, ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE: content });
    assert.equal(summary.status, 'accepted', JSON.stringify(summary.reasons));
    const full = await getJSON(`${collector.replayURL}/v1/cases/${summary.case_id}`);
    assert.deepEqual(full.steps.filter((st) => st.kind === 'llm').map((st) => st.response_id),
      [`msg_${recorded.toolCalls[0].id.split('_')[1]}`, recorded.messageId], 'two calls, two model steps');
    const calls = model.server.requests;
    const base = `${collector.replayURL}/v1/cases/${summary.case_id}/anthropic`;
    const session = `${instrumentation}-${content}-${recordStream}`;
    for (const stream of ['0', '1']) {
      const replayed = await runAgent({ ANTHROPIC_SDK: sdk, STREAM: stream, REPLAY_SESSION: `${session}-${stream}`, ANTHROPIC_BASE_URL: base });
      assert.deepEqual(replayed, recorded, `stream=${stream}: the same tool_use ids, inputs, answer and message id`);
    }
    assert.equal(model.server.requests, calls, 'zero upstream calls');
    const strict = await runAgent({ ANTHROPIC_SDK: sdk, SYSTEM_PROMPT: 'You are terse.', REPLAY_SESSION: `${session}-strict`, ANTHROPIC_BASE_URL: base });
    assert.equal(strict.error.status, 404);
    assert.equal(model.server.requests, calls);
    const hybrid = await runAgent({ ANTHROPIC_SDK: sdk, SYSTEM_PROMPT: 'You are terse.', REPLAY_SESSION: `${session}-hybrid`, REPLAY_MODE: 'hybrid', ANTHROPIC_BASE_URL: base });
    assert.equal(hybrid.error, undefined, JSON.stringify(hybrid.error));
    assert.equal(model.server.requests - calls, 2, 'both calls of the session went live');
    assert.equal(hybrid.answer, recorded.answer);
  });
}

// OpenLLMetry records a messages.stream call's tool_use blocks from their start events only:
// arguments {}, while the tool executions (and the next request) show the real ones. The run is
// quarantined, naming each call, instead of replaying calls the agent never got.
test('traceloop: a run recorded with messages.stream is quarantined because the tool arguments were lost', async () => {
  const { recorded, summary } = await recordRun('anthropic-traceloop-1', { INSTRUMENTATION: 'traceloop', ANTHROPIC_SDK: '0', STREAM: '1' });
  assert.equal(summary.status, 'quarantined');
  assert.deepEqual(summary.reasons.map((r) => [r.code, r.detail]), recorded.toolCalls.map((c) => ['no_model_output',
    `model call "chat claude-haiku-4-5" recorded tool call "${c.id}" with arguments {}, but the trace shows it made with ${JSON.stringify(c.input)} (arguments lost, as when a stream is recorded from its start events only)`]));
});

// OpenLLMetry (@traceloop/instrumentation-anthropic 0.27.0, the newest release) does not run
// with @anthropic-ai/sdk 1.x (the pinned 1.14.0): its patch wraps Anthropic.Completions, which the SDK removed, so
// loading the SDK under it throws and no run is recorded at all.
test('traceloop: the instrumentation does not load with @anthropic-ai/sdk 1.14', async () => {
  await assert.rejects(runAgent({ INSTRUMENTATION: 'traceloop', OTLP_ENDPOINT: collector.otlp, SERVICE_NAME: 'anthropic-traceloop', ANTHROPIC_BASE_URL: model.url }),
    /TypeError: Cannot read properties of undefined \(reading 'prototype'\)[\s\S]*instrumentation-anthropic/);
});
