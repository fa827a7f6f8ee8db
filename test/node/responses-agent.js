// A tool-using agent on the real openai SDK's Responses API (client.responses.create): the
// same code records a run and replays it. Prints what it did as JSON on stdout.
//
// Environment: OPENAI_BASE_URL; OTLP_ENDPOINT (http://host:port, optional); INSTRUMENTATION
// (otel | openinference | traceloop | none); SERVICE_NAME; STREAM=1; PROMPT; INSTRUCTIONS; REPLAY_SESSION;
// REPLAY_MODE.
'use strict';
const api = require('@opentelemetry/api');
const logsAPI = require('@opentelemetry/api-logs');
const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace');
const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { replayHeaders, inAgentSpan } = require('./tracing');

const env = process.env;
let providers = [];
if (env.OTLP_ENDPOINT && env.INSTRUMENTATION !== 'none') {
  const resource = resourceFromAttributes({ 'service.name': env.SERVICE_NAME || 'responses-agent' });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const tp = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: env.OTLP_ENDPOINT + '/v1/traces' }) })] });
  api.trace.setGlobalTracerProvider(tp);
  const lp = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: env.OTLP_ENDPOINT + '/v1/logs' }) })] });
  logsAPI.logs.setGlobalLoggerProvider(lp);
  providers = [tp, lp];
  const instrumentations = {
    otel: () => new (require('@opentelemetry/instrumentation-openai').OpenAIInstrumentation)({ captureMessageContent: true }),
    openinference: () => new (require('@arizeai/openinference-instrumentation-openai').OpenAIInstrumentation)(),
    traceloop: () => new (require('@traceloop/instrumentation-openai').OpenAIInstrumentation)({ traceContent: true }),
  };
  registerInstrumentations({ instrumentations: [instrumentations[env.INSTRUMENTATION]()] });
}
const OpenAI = require('openai');

const tools = [{ type: 'function', name: 'get_weather', description: 'Current weather for a city', strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];

async function create(client, request) {
  if (env.STREAM !== '1') return client.responses.create(request);
  const stream = await client.responses.create({ ...request, stream: true });
  let done;
  for await (const event of stream) if (event.type === 'response.completed') done = event.response;
  return done;
}

async function run() {
  const client = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: 'sk-reprise-test-not-a-key', defaultHeaders: replayHeaders(), maxRetries: 0 });
  const out = { toolCalls: [], answer: null };
  return inAgentSpan('responses-agent', 'weather-bot', out, async (tracer) => {
    const base = { model: 'gpt-4.1-mini', instructions: env.INSTRUCTIONS || 'You are a weather assistant.', tools, temperature: 0.2 };
    const input = [{ role: 'user', content: env.PROMPT || 'Weather in Paris and Lyon?' }];
    for (let turn = 0; turn < 3 && out.answer === null; turn++) {
      const res = await create(client, { ...base, input });
      const calls = res.output.filter((i) => i.type === 'function_call');
      if (calls.length === 0) {
        out.answer = res.output_text || res.output.filter((i) => i.type === 'message').map((m) => m.content.map((c) => c.text).join('')).join('');
        out.responseId = res.id;
        out.messageItemIds = res.output.filter((i) => i.type === 'message').map((i) => i.id);
        break;
      }
      for (const c of calls) {
        input.push({ type: 'function_call', id: c.id, call_id: c.call_id, name: c.name, arguments: c.arguments });
      }
      for (const c of calls) {
        const args = JSON.parse(c.arguments);
        const result = tracer.startActiveSpan('execute_tool get_weather', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather', 'gen_ai.tool.call.id': c.call_id, 'gen_ai.tool.call.arguments': c.arguments } }, (span) => {
          const r = JSON.stringify({ city: args.city, temperature: 14, sky: 'overcast' });
          span.setAttribute('gen_ai.tool.call.result', r);
          span.end();
          return r;
        });
        out.toolCalls.push({ id: c.id, callId: c.call_id, arguments: c.arguments, result });
        input.push({ type: 'function_call_output', call_id: c.call_id, output: result });
      }
    }
  });
}

run().then(async (out) => {
  for (const p of providers) await p.forceFlush();
  process.stdout.write(JSON.stringify(out) + '\n');
  for (const p of providers) await p.shutdown();
});
