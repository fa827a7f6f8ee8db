// The OpenAI Responses API end to end: an agent on the real openai SDK's responses.create
// (two parallel function calls, then an answer) is recorded through the collector under a real
// instrumentation (OpenInference, and the official OTel JS one), then replayed through the
// replay extension, JSON and stream, with the model server counting every call it gets; a
// changed prompt is refused in strict mode and goes live in hybrid mode. Needs REPRISE_BIN
// (scripts/test.sh builds it).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { waitFor, getJSON, startCollector, startJSONServer, runAgent: harnessRunAgent } = require('./harness');

const bin = process.env.REPRISE_BIN;
let collector, otlp, replayURL, model;

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
  });
}

const runAgent = (env) => harnessRunAgent(env, 'responses-agent.js');

before(async () => {
  assert.ok(bin && fs.existsSync(bin), 'set REPRISE_BIN to the collector built from this repository');
  model = await startResponsesServer();
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reprise-responses-'));
  collector = await startCollector(bin, workDir, `    upstream:
      openai:
        endpoint: ${model.url}`);
  otlp = collector.otlp;
  replayURL = collector.replayURL;
});

after(async () => {
  if (collector) await collector.stop();
  if (model) model.server.close();
});

async function record(instrumentation) {
  const service = `responses-${instrumentation}`;
  const out = await runAgent({ INSTRUMENTATION: instrumentation, SERVICE_NAME: service, OTLP_ENDPOINT: otlp, OPENAI_BASE_URL: model.url });
  assert.equal(out.error, undefined);
  const summary = await waitFor(`the case of ${service}`, async () => {
    const list = await getJSON(`${replayURL}/v1/cases?status=`);
    return list && list.cases.find((c) => c.provenance.service_name === service);
  }, () => collector.log);
  return { out, summary };
}

for (const instrumentation of ['openinference', 'otel']) test(`${instrumentation}: a Responses run replays offline through the unmodified SDK, JSON and stream`, async () => {
  const { out: recorded, summary } = await record(instrumentation);
  assert.equal(summary.status, 'accepted', JSON.stringify(summary.reasons));
  const calls = model.server.requests;
  for (const stream of ['0', '1']) {
    const replayed = await runAgent({ INSTRUMENTATION: 'none', STREAM: stream, REPLAY_SESSION: `${instrumentation}-${stream}`,
      OPENAI_BASE_URL: `${replayURL}/v1/cases/${summary.case_id}/openai/v1` });
    assert.equal(replayed.error, undefined, JSON.stringify(replayed.error));
    assert.deepEqual(replayed.toolCalls.map((c) => [c.callId, c.arguments, c.result]), recorded.toolCalls.map((c) => [c.callId, c.arguments, c.result]), 'same calls, same call ids');
    assert.equal(replayed.answer, recorded.answer);
    assert.equal(replayed.responseId, recorded.responseId, 'the recorded response id');
  }
  assert.equal(model.server.requests, calls, 'zero upstream calls');

  // Changed instructions: strict refuses, hybrid goes live at the first call and stays live.
  const changed = { INSTRUMENTATION: 'none', INSTRUCTIONS: 'You are terse.', OPENAI_BASE_URL: `${replayURL}/v1/cases/${summary.case_id}/openai/v1` };
  const strict = await runAgent({ ...changed, REPLAY_SESSION: `${instrumentation}-strict` });
  assert.equal(strict.error.status, 404);
  assert.match(strict.error.message, /differs from the next recorded model call .* at: messages\[0\]\.content\[0\]\.text/);
  assert.equal(model.server.requests, calls);
  const hybrid = await runAgent({ ...changed, REPLAY_SESSION: `${instrumentation}-hybrid`, REPLAY_MODE: 'hybrid' });
  assert.equal(hybrid.error, undefined, JSON.stringify(hybrid.error));
  assert.equal(model.server.requests - calls, 2, 'both calls of the session went live');
  assert.equal(hybrid.answer, recorded.answer);
  const divs = await getJSON(`${replayURL}/v1/divergences?session=${instrumentation}-hybrid`);
  assert.deepEqual(divs.divergences.map((d) => [d.live, d.findings.map((f) => f.type)]), [[true, ['prompt_changed']]]);
});
