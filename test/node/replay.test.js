// End-to-end: record an agent run through the reprise collector with a real GenAI
// instrumentation, then replay it offline through the replay extension with the agent's own,
// unmodified openai SDK. Needs REPRISE_BIN, the collector built from this repository
// (scripts/test.sh builds it).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { freePort, waitFor, startModelServer, runAgent, getJSON, startCollector, makeWorkDir } = require('./harness');

const bin = process.env.REPRISE_BIN;
let collector, otlp, replayURL, workDir;

// caseOf waits until the case recorded by service is listed.
function caseOf(service) {
  return waitFor(`the case of ${service}`, async () => {
    const list = await getJSON(`${replayURL}/v1/cases?agent=weather-bot`);
    return list.cases.find((c) => c.provenance.service_name === service);
  }, () => collector.log);
}

before(async () => {
  assert.ok(bin && fs.existsSync(bin), 'set REPRISE_BIN to the collector built from this repository');
  workDir = makeWorkDir('node');
  collector = await startCollector(bin, workDir);
  otlp = collector.otlp;
  replayURL = collector.replayURL;
});

after(() => collector && collector.stop());

for (const instrumentation of ['otel', 'openinference', 'traceloop']) {
  test(`${instrumentation}: a recorded run replays offline through the unmodified SDK`, async () => {
    const service = `weather-agent-${instrumentation}`;
    const model = await startModelServer();
    const recorded = await runAgent({ INSTRUMENTATION: instrumentation, OTLP_ENDPOINT: otlp, SERVICE_NAME: service, OPENAI_BASE_URL: model.url, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    assert.equal(recorded.error, undefined);
    assert.equal(recorded.toolCalls.length, 1);
    assert.equal(recorded.toolCalls[0].arguments, '{"city":"Paris","unit":"celsius"}');
    assert.match(recorded.answer, /it is mild in Paris/);
    const modelRequests = model.server.requests;
    assert.equal(modelRequests, 2);
    await new Promise((r) => model.server.close(r)); // the model is gone from here on

    const found = await caseOf(service);
    assert.equal(found.status, 'accepted', JSON.stringify(found.reasons));
    assert.ok(found.provenance.conventions.length > 0);
    const base = `${replayURL}/v1/cases/${found.case_id}/openai/v1`;
    const replay = (extra) => runAgent({ INSTRUMENTATION: instrumentation, OTLP_ENDPOINT: otlp, SERVICE_NAME: `${service}-replay`, OPENAI_BASE_URL: base, ...extra });

    for (const stream of ['', '1']) {
      const replayed = await replay({ STREAM: stream, REPLAY_SESSION: `${service}-${stream || 'json'}` });
      assert.deepEqual(replayed, recorded, `stream=${stream === '1'}`);
    }
    assert.equal(model.server.requests, modelRequests, 'zero requests to the model server');

    const changed = await replay({ PROMPT: 'What is the weather in Lyon today?', REPLAY_SESSION: `${service}-strict` });
    assert.equal(changed.error.status, 404);
    assert.match(changed.error.message, /differs from the next recorded model call of case [0-9a-f]+ at: messages\[1\]\.content\[0\]\.text$/);
    assert.doesNotMatch(changed.error.message, /Paris|Lyon/, 'errors name paths, never text');

    const lenient = await replay({ PROMPT: 'What is the weather in Lyon today?', REPLAY_SESSION: `${service}-lenient`, REPLAY_MODE: 'lenient' });
    assert.equal(lenient.error, undefined);
    assert.equal(lenient.answer, recorded.answer, 'lenient serves the recorded calls in order');
    const divergences = await getJSON(`${replayURL}/v1/divergences?session=${service}-lenient`);
    assert.equal(divergences.divergences.length, 2, 'both calls carry the changed prompt');
    for (const d of divergences.divergences) {
      assert.deepEqual(d.paths, ['messages[1].content[0].text']);
      assert.equal(d.differences, undefined, 'values only with local_debug');
    }
  });
}

// A replay server exposed to a team: the extension checks the SDK's API key through the
// bearertokenauth extension. The right key replays; a wrong one gets 401 from the SDK.
test('auth: the SDK API key is checked through bearertokenauth', async () => {
  const service = 'weather-agent-auth';
  const model = await startModelServer();
  const recorded = await runAgent({ INSTRUMENTATION: 'otel', OTLP_ENDPOINT: otlp, SERVICE_NAME: service, OPENAI_BASE_URL: model.url, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
  assert.equal(recorded.error, undefined);
  await new Promise((r) => model.server.close(r));
  const found = await caseOf(service);

  // A second collector serves the same dataset behind bearertokenauth.
  const [port, otlpPort] = [await freePort(), await freePort()];
  const key = 'sk-team-replay-0123456789abcdef';
  const config = `
extensions:
  bearertokenauth/replay:
    scheme: Bearer
    token: \${env:REPLAY_API_KEY}
  replay:
    endpoint: 127.0.0.1:${port}
    directory: ${workDir}/data
    auth:
      authenticator: bearertokenauth/replay
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlpPort}
exporters:
  nop:
service:
  extensions: [bearertokenauth/replay, replay]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [nop]
`;
  const file = path.join(workDir, 'auth.yaml');
  fs.writeFileSync(file, config);
  let log = '';
  const secured = spawn(bin, ['--config', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REPLAY_API_KEY: key } });
  secured.stdout.on('data', (d) => (log += d));
  secured.stderr.on('data', (d) => (log += d));
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitFor('the authenticated replay server', async () => {
      const res = await fetch(`${url}/v1/cases`, { headers: { Authorization: `Bearer ${key}` } });
      return res.ok;
    });
    const anonymous = await fetch(`${url}/v1/cases`);
    assert.equal(anonymous.status, 401, 'listing needs the key too');
    const divergences = await fetch(`${url}/v1/divergences?session=x`);
    assert.equal(divergences.status, 401, 'the divergence log needs the key too');

    const base = `${url}/v1/cases/${found.case_id}/openai/v1`;
    const replay = (apiKey, session) => runAgent({ INSTRUMENTATION: 'none', SERVICE_NAME: `${service}-replay`, OPENAI_BASE_URL: base, OPENAI_API_KEY: apiKey, REPLAY_SESSION: session });
    const accepted = await replay(key, 'auth-ok');
    assert.deepEqual(accepted, recorded, `accepted\n${log.slice(-2000)}`);
    const refused = await replay('sk-wrong-key', 'auth-wrong');
    assert.equal(refused.error.status, 401);
    assert.equal(refused.answer, null);
  } finally {
    secured.kill('SIGTERM');
  }
});
