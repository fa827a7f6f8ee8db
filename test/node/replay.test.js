// End-to-end: record an agent run through the reprise collector with a real GenAI
// instrumentation, then replay it offline through the replay extension with the agent's own,
// unmodified openai SDK. Needs REPRISE_BIN, the collector built from this repository
// (scripts/test.sh builds it).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freePort, waitFor, startModelServer, runAgent, getJSON } = require('./harness');

const bin = process.env.REPRISE_BIN;
let collector, otlp, replayURL, workDir, collectorLog = '';

before(async () => {
  assert.ok(bin && fs.existsSync(bin), 'set REPRISE_BIN to the collector built from this repository');
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reprise-node-'));
  const [otlpPort, replayPort] = [await freePort(), await freePort()];
  otlp = `http://127.0.0.1:${otlpPort}`;
  replayURL = `http://127.0.0.1:${replayPort}`;
  const config = `
extensions:
  replay:
    endpoint: 127.0.0.1:${replayPort}
    directory: ${workDir}/data
    refresh_interval: 200ms
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
    directory: ${workDir}/data
    sending_queue:
      batch:
        flush_timeout: 300ms
  nop:
service:
  extensions: [replay]
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
  fs.writeFileSync(path.join(workDir, 'config.yaml'), config);
  collector = spawn(bin, ['--config', path.join(workDir, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  collector.stdout.on('data', (d) => (collectorLog += d));
  collector.stderr.on('data', (d) => (collectorLog += d));
  await waitFor('the collector', () => getJSON(`${replayURL}/v1/cases`), () => collectorLog);
});

after(() => {
  if (collector) collector.kill('SIGTERM');
});

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

    const found = await waitFor(`the case of ${service}`, async () => {
      const list = await getJSON(`${replayURL}/v1/cases?agent=weather-bot`);
      return list.cases.find((c) => c.provenance.service_name === service);
    }, () => collectorLog);
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
    assert.match(changed.error.message, /messages\[1\]\.content\[0\]\.text: recorded "What is the weather in Paris today\?", requested "What is the weather in Lyon today\?"/);

    const lenient = await replay({ PROMPT: 'What is the weather in Lyon today?', REPLAY_SESSION: `${service}-lenient`, REPLAY_MODE: 'lenient' });
    assert.equal(lenient.error, undefined);
    assert.equal(lenient.answer, recorded.answer, 'lenient serves the recorded calls in order');
    const divergences = await getJSON(`${replayURL}/v1/divergences?session=${service}-lenient`);
    assert.equal(divergences.divergences.length, 2, 'both calls carry the changed prompt');
    for (const d of divergences.divergences) {
      assert.equal(d.differences[0].path, 'messages[1].content[0].text');
    }
  });
}
