// The Vercel AI SDK end to end: a tool-using agent (generateText and streamText, two parallel
// get_weather calls, then an answer) with experimental_telemetry on, over @ai-sdk/openai's
// openai(…) (the Responses API) and @ai-sdk/anthropic's anthropic(…)
// (Messages). Each run is recorded through the collector, then replayed through the replay
// extension, JSON and stream, with the model servers counting every call they get; a changed
// system prompt is refused in strict mode and goes live in hybrid mode. Then `reprise ci` replays
// a recorded run of each provider through the same agent, left to read the base URL that
// reprise ci sets (@ai-sdk/anthropic appends /messages to it, the Anthropic SDKs /v1/messages).
// Needs REPRISE_BIN (scripts/test.sh builds it).
'use strict';
const { test, before, after } = require('node:test');
const { execFile } = require('node:child_process');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { waitFor, getJSON, startCollector, startResponsesServer, startMessagesServer, runAgent: harnessRunAgent, makeWorkDir } = require('./harness');

const bin = process.env.REPRISE_BIN;
let collector, workDir;
const models = {};
const caseIds = {}; // service name → the case its recorded run became

const runAgent = (env) => harnessRunAgent(env, 'vercel-agent.js');

before(async () => {
  assert.ok(bin && fs.existsSync(bin), 'set REPRISE_BIN to the collector built from this repository');
  models.openai = await startResponsesServer();
  models.anthropic = await startMessagesServer();
  workDir = makeWorkDir('vercel');
  collector = await startCollector(bin, workDir, `    upstream:
      openai:
        endpoint: ${models.openai.url}
      anthropic:
        endpoint: ${models.anthropic.url}`);
});

after(async () => {
  if (collector) await collector.stop();
  for (const m of Object.values(models)) m.server.close();
});

const requests = () => models.openai.server.requests + models.anthropic.server.requests;
// The SDKs' base URLs: @ai-sdk/anthropic's includes /v1, unlike @anthropic-ai/sdk's.
const baseURL = (provider, root) => root + (provider === 'anthropic' ? '/anthropic/v1' : '/openai/v1');

for (const provider of ['openai', 'anthropic']) for (const recordStream of ['0', '1']) {
  test(`vercel ${provider}: a ${recordStream === '1' ? 'streamText' : 'generateText'} run replays offline, generateText and streamText`, async () => {
    const service = `vercel-${provider}-${recordStream}`;
    const recorded = await runAgent({ PROVIDER: provider, STREAM: recordStream, OTLP_ENDPOINT: collector.otlp, SERVICE_NAME: service,
      BASE_URL: models[provider].url + (provider === 'anthropic' ? '/v1' : '') });
    assert.equal(recorded.error, undefined, JSON.stringify(recorded.error));
    assert.equal(recorded.toolCalls.length, 2);
    if (provider === 'openai') {
      // store defaults to true, but @ai-sdk/openai 3.0.141 sends item_reference only for
      // provider-executed tools: the follow-up repeats each function call in full, by call_id.
      const followUp = models.openai.server.bodies[models.openai.server.bodies.length - 1];
      assert.deepEqual(followUp.input.filter((i) => i.type !== undefined).map((i) => [i.type, i.call_id]),
        recorded.toolCalls.map((c) => ['function_call', c.id]).concat(recorded.toolCalls.map((c) => ['function_call_output', c.id])));
    }
    const summary = await waitFor(`the case of ${service}`, async () => {
      const list = await getJSON(`${collector.replayURL}/v1/cases?status=`);
      return list && list.cases.find((c) => c.provenance.service_name === service);
    }, () => collector.log);
    assert.equal(summary.status, 'accepted', JSON.stringify(summary.reasons));
    caseIds[service] = summary.case_id;
    const calls = requests();
    const base = baseURL(provider, `${collector.replayURL}/v1/cases/${summary.case_id}`);
    for (const stream of ['0', '1']) {
      const replayed = await runAgent({ PROVIDER: provider, STREAM: stream, REPLAY_SESSION: `${service}-${stream}`, BASE_URL: base });
      assert.deepEqual(replayed, recorded, `stream=${stream}: the same tool call ids, inputs, answer and response ids`);
    }
    assert.equal(requests(), calls, 'zero upstream calls');

    const changed = { PROVIDER: provider, SYSTEM_PROMPT: 'You are terse.', BASE_URL: base };
    const strict = await runAgent({ ...changed, REPLAY_SESSION: `${service}-strict` });
    assert.equal(strict.error.status, 404, JSON.stringify(strict));
    assert.match(strict.error.message, /differs from the next recorded model call/);
    assert.equal(requests(), calls);
    const hybrid = await runAgent({ ...changed, REPLAY_SESSION: `${service}-hybrid`, REPLAY_MODE: 'hybrid' });
    assert.equal(hybrid.error, undefined, JSON.stringify(hybrid.error));
    assert.equal(requests() - calls, 2, 'both calls of the session went live');
    assert.equal(hybrid.answer, recorded.answer);
    const divs = await getJSON(`${collector.replayURL}/v1/divergences?session=${service}-hybrid`);
    assert.deepEqual(divs.divergences.map((d) => [d.live, d.findings.map((f) => f.type)]), [[true, ['prompt_changed']]]);
  });
}

function reprise(args, env) {
  return new Promise((resolve) => {
    execFile(bin, args, { env: { ...process.env, ...env }, timeout: 120000 }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

for (const provider of ['openai', 'anthropic']) {
  test(`vercel ${provider}: reprise ci replays a recorded run with the base URL it sets`, async () => {
    const caseId = caseIds[`vercel-${provider}-0`];
    assert.ok(caseId, 'the generateText run was recorded by the test above');
    const report = path.join(workDir, `ci-${provider}.json`);
    const calls = requests();
    // No BASE_URL: the provider package reads OPENAI_BASE_URL / ANTHROPIC_BASE_URL, as a user's
    // agent that sets no baseURL does.
    const res = await reprise(['ci', '--dataset', path.join(workDir, 'data'), '--case', caseId, '--json', report, '--', process.execPath, path.join(__dirname, 'vercel-agent.js')],
      { PROVIDER: provider, BASE_URL: '', OTLP_ENDPOINT: '' });
    const parsed = fs.existsSync(report) ? JSON.parse(fs.readFileSync(report, 'utf8')) : undefined;
    assert.equal(res.code, 0, res.stderr + JSON.stringify(parsed && parsed.results, null, 1));
    assert.equal(parsed.cases, 1);
    assert.equal(parsed.passed, 1);
    assert.equal(requests(), calls, 'zero upstream calls');
  });
}
