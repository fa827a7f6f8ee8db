// A retrieval agent on the real openai SDK: it embeds the question and two documents with
// embeddings.create (ENCODING=float asks for floats; otherwise the SDK asks for base64 and
// decodes it), picks the nearer document and answers with responses.create. Traced by
// OpenInference; the same code records a run and replays it. Prints what it did as JSON.
//
// Environment: OPENAI_BASE_URL; OTLP_ENDPOINT (http://host:port, optional); SERVICE_NAME;
// ENCODING; QUESTION; REPLAY_SESSION; REPLAY_MODE.
'use strict';
const api = require('@opentelemetry/api');
const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');

const env = process.env;
let provider;
if (env.OTLP_ENDPOINT) {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': env.SERVICE_NAME || 'embeddings-agent' }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: env.OTLP_ENDPOINT + '/v1/traces' }) })] });
  api.trace.setGlobalTracerProvider(provider);
  registerInstrumentations({ instrumentations: [new (require('@arizeai/openinference-instrumentation-openai').OpenAIInstrumentation)()] });
}
const OpenAI = require('openai');

const docs = ['Paris is mild in spring.', 'Lyon is rainy in autumn.'];

async function run() {
  const headers = {};
  if (env.REPLAY_SESSION) headers['X-Replay-Session'] = env.REPLAY_SESSION;
  if (env.REPLAY_MODE) headers['X-Replay-Mode'] = env.REPLAY_MODE;
  const client = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: 'sk-reprise-test-not-a-key', defaultHeaders: headers, maxRetries: 0 });
  const tracer = api.trace.getTracer('embeddings-agent');
  return tracer.startActiveSpan('invoke_agent rag-bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'rag-bot' } }, async (root) => {
    const out = { vectors: [], answer: null };
    try {
      const question = env.QUESTION || 'What is Paris like in spring?';
      const request = { model: 'text-embedding-3-small', input: [question, ...docs] };
      if (env.ENCODING === 'float') request.encoding_format = 'float';
      const res = await client.embeddings.create(request);
      out.vectors = res.data.map((d) => Array.from(d.embedding));
      const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
      const best = dot(out.vectors[0], out.vectors[1]) >= dot(out.vectors[0], out.vectors[2]) ? docs[0] : docs[1];
      const answer = await client.responses.create({ model: 'gpt-4.1-mini', instructions: `Answer from: ${best}`, input: [{ role: 'user', content: question }] });
      out.answer = answer.output_text;
    } catch (err) {
      out.error = { status: err.status, message: err.message };
      root.setStatus({ code: api.SpanStatusCode.ERROR });
    } finally {
      root.end();
    }
    return out;
  });
}

run().then(async (out) => {
  if (provider) await provider.forceFlush();
  process.stdout.write(JSON.stringify(out) + '\n');
  if (provider) await provider.shutdown();
});
