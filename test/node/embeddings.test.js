// Embeddings end to end: an agent on the real openai SDK embeds a question and two documents
// (embeddings.create, floats or the SDK's default base64), then answers with responses.create,
// recorded through the collector under OpenInference (which records every input text and
// vector) and replayed through the replay extension in both encodings with the model server
// counting every call it gets; a changed question is refused in strict mode and goes live in
// hybrid mode. Needs REPRISE_BIN (scripts/test.sh builds it).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { waitFor, getJSON, startCollector, startEmbeddingsServer, runAgent: harnessRunAgent, makeWorkDir } = require('./harness');

const bin = process.env.REPRISE_BIN;
let collector, model;
const cases = {}; // the replay URL of each recorded case, by encoding

const runAgent = (env) => harnessRunAgent(env, 'embeddings-agent.js');

before(async () => {
  assert.ok(bin && fs.existsSync(bin), 'set REPRISE_BIN to the collector built from this repository');
  model = await startEmbeddingsServer();
  const workDir = makeWorkDir('embeddings');
  collector = await startCollector(bin, workDir, `    upstream:
      openai:
        endpoint: ${model.url}`);
});

after(async () => {
  if (collector) await collector.stop();
  if (model) model.server.close();
});

for (const encoding of ['float', 'base64']) test(`openinference: embeddings recorded as ${encoding} replay as floats and as base64`, async () => {
  const service = `embeddings-${encoding}`;
  const recorded = await runAgent({ ENCODING: encoding === 'float' ? 'float' : '', OTLP_ENDPOINT: collector.otlp, SERVICE_NAME: service, OPENAI_BASE_URL: model.url });
  assert.equal(recorded.error, undefined);
  assert.equal(model.server.bodies[model.server.bodies.length - 2].encoding_format, encoding, 'the SDK asked for this encoding');
  const summary = await waitFor(`the case of ${service}`, async () => {
    const list = await getJSON(`${collector.replayURL}/v1/cases?status=`);
    return list && list.cases.find((c) => c.provenance.service_name === service);
  }, () => collector.log);
  assert.equal(summary.status, 'accepted', JSON.stringify(summary.reasons));
  const calls = model.server.requests;
  const base = `${collector.replayURL}/v1/cases/${summary.case_id}/openai/v1`;
  for (const replayEncoding of ['float', '']) {
    const replayed = await runAgent({ ENCODING: replayEncoding, REPLAY_SESSION: `${service}-${replayEncoding || 'base64'}`, OPENAI_BASE_URL: base });
    assert.deepEqual(replayed, recorded, `replayed as ${replayEncoding || 'base64'}: the same vectors and answer`);
  }
  assert.equal(model.server.requests, calls, 'zero upstream calls');

  const changed = { QUESTION: 'What is Lyon like in autumn?', OPENAI_BASE_URL: base };
  const strict = await runAgent({ ...changed, REPLAY_SESSION: `${service}-strict` });
  assert.equal(strict.error.status, 404, JSON.stringify(strict));
  assert.match(strict.error.message, /no recorded embedding call matches this request; .* at: input$/);
  assert.equal(model.server.requests, calls);
  cases[encoding] = { base };
});

test('openinference: a changed question goes live in hybrid mode, the embeddings call first', async () => {
  const { base } = cases.float;
  const calls = model.server.requests;
  const hybrid = await runAgent({ QUESTION: 'What is Lyon like in autumn?', OPENAI_BASE_URL: base, REPLAY_SESSION: 'embeddings-hybrid', REPLAY_MODE: 'hybrid' });
  assert.equal(hybrid.error, undefined, JSON.stringify(hybrid.error));
  assert.equal(model.server.requests - calls, 2, 'the embeddings call and the answer went live');
  const divs = await getJSON(`${collector.replayURL}/v1/divergences?session=embeddings-hybrid`);
  assert.deepEqual(divs.divergences.map((d) => [d.endpoint, d.live]), [['embeddings', true]], JSON.stringify(divs));
});
