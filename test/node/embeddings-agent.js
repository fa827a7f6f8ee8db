// A retrieval agent on the real openai SDK: it embeds the question and two documents with
// embeddings.create (ENCODING=float asks for floats; otherwise the SDK asks for base64 and
// decodes it), picks the nearer document and answers with responses.create. Traced by
// OpenInference; the same code records a run and replays it. Prints what it did as JSON.
//
// Environment: OPENAI_BASE_URL; OTLP_ENDPOINT (http://host:port, optional); SERVICE_NAME;
// ENCODING; QUESTION; REPLAY_SESSION; REPLAY_MODE.
'use strict';
const { startTracing, finish, replayHeaders, inAgentSpan } = require('./tracing');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');

const env = process.env;
const provider = startTracing('embeddings-agent');
if (provider) {
  registerInstrumentations({ instrumentations: [new (require('@arizeai/openinference-instrumentation-openai').OpenAIInstrumentation)()] });
}
const OpenAI = require('openai');

const docs = ['Paris is mild in spring.', 'Lyon is rainy in autumn.'];

async function run() {
  const client = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: 'sk-reprise-test-not-a-key', defaultHeaders: replayHeaders(), maxRetries: 0 });
  const out = { vectors: [], answer: null };
  return inAgentSpan('embeddings-agent', 'rag-bot', out, async () => {
    const question = env.QUESTION || 'What is Paris like in spring?';
    const request = { model: 'text-embedding-3-small', input: [question, ...docs] };
    if (env.ENCODING === 'float') request.encoding_format = 'float';
    const res = await client.embeddings.create(request);
    out.vectors = res.data.map((d) => Array.from(d.embedding));
    const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
    const best = dot(out.vectors[0], out.vectors[1]) >= dot(out.vectors[0], out.vectors[2]) ? docs[0] : docs[1];
    const answer = await client.responses.create({ model: 'gpt-4.1-mini', instructions: `Answer from: ${best}`, input: [{ role: 'user', content: question }] });
    out.answer = answer.output_text;
  });
}

run().then((out) => finish(provider, out));
