// A small tool-using agent on the real openai SDK. The same code records a run (its base URL
// pointed at a model server, its telemetry sent to the collector) and replays it (its base URL
// pointed at the replay extension). It prints what it did as JSON on stdout.
//
// Environment: OPENAI_BASE_URL; OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (http://host:port,
// optional); INSTRUMENTATION (otel | openinference | traceloop | none); SERVICE_NAME; STREAM=1;
// PROMPT, or REPRISE_CASE_FILE (what `reprise ci` gives: the recorded question); REPLAY_SESSION
// (else REPRISE_REPLAY_SESSION, which `reprise ci` sets); REPLAY_MODE (strict | lenient | hybrid); OPENAI_API_KEY (default a dummy key). What a changed agent would change: SYSTEM_PROMPT,
// TEMPERATURE, TOOL_SKY (what get_weather returns), RETRIEVAL=1 to look up documents first,
// DOCS (comma-separated ids the retriever returns); TOOLS_FROM_REPLAY=1 to take get_weather's
// result from the replay extension (REPRISE_REPLAY_URL, which `reprise ci` sets).
'use strict';
const api = require('@opentelemetry/api');
const logsAPI = require('@opentelemetry/api-logs');
const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace');
const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');
const { resourceFromAttributes, detectResources, envDetector } = require('@opentelemetry/resources');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');

const env = process.env;
const otlpEndpoint = env.OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
let tracerProvider, loggerProvider;
if (otlpEndpoint && env.INSTRUMENTATION !== 'none') {
  // OTEL_RESOURCE_ATTRIBUTES too, as the SDK's default detectors read it: `reprise ci` links
  // the new run to the recorded case through it.
  const resource = resourceFromAttributes({ 'service.name': env.SERVICE_NAME || 'weather-agent', 'service.version': '1.0.0' })
    .merge(detectResources({ detectors: [envDetector] }));
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  tracerProvider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: otlpEndpoint + "/v1/traces" }) })] });
  api.trace.setGlobalTracerProvider(tracerProvider);
  loggerProvider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: otlpEndpoint + "/v1/logs" }) })] });
  logsAPI.logs.setGlobalLoggerProvider(loggerProvider);
  const instrumentations = {
    otel: () => new (require('@opentelemetry/instrumentation-openai').OpenAIInstrumentation)({ captureMessageContent: true }),
    openinference: () => new (require('@arizeai/openinference-instrumentation-openai').OpenAIInstrumentation)(),
    traceloop: () => new (require('@traceloop/instrumentation-openai').OpenAIInstrumentation)({ traceContent: true }),
  };
  registerInstrumentations({ instrumentations: [instrumentations[env.INSTRUMENTATION]()] });
}
const OpenAI = require('openai'); // after the instrumentation is registered

const SYSTEM = env.SYSTEM_PROMPT || 'You are a weather assistant. Use get_weather(city, unit) for live conditions.';
const caseFile = env.REPRISE_CASE_FILE && JSON.parse(require('node:fs').readFileSync(env.REPRISE_CASE_FILE, 'utf8'));
const PROMPT = env.PROMPT || (caseFile && caseFile.question) || 'What is the weather in Paris today?';
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather', description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city'] },
  },
}];

async function getWeather(args) {
  if (env.TOOLS_FROM_REPLAY === '1') { // the case's recorded (or mutated) result, from the replay extension
    const res = await fetch(`${env.REPRISE_REPLAY_URL}/tools/get_weather`, { method: 'POST', body: JSON.stringify(args), headers: { 'X-Replay-Session': env.REPRISE_REPLAY_SESSION || '' } });
    if (!res.ok) throw new Error(`replayed tool: ${res.status} ${await res.text()}`);
    return (await res.json()).result;
  }
  return JSON.stringify({ city: args.city, temperature: 14, unit: args.unit || 'celsius', sky: env.TOOL_SKY || 'overcast' });
}

// retrieve records a knowledge-base lookup the way OpenInference retrievers do.
function retrieve(tracer, query) {
  const ids = (env.DOCS || 'doc-paris-climate,doc-weather-api').split(',');
  tracer.startActiveSpan('retrieval kb', {
    attributes: { 'gen_ai.operation.name': 'retrieval', 'gen_ai.data_source.id': 'kb-v3', 'openinference.span.kind': 'RETRIEVER', 'input.value': query },
  }, (span) => {
    ids.forEach((id, i) => {
      span.setAttribute(`retrieval.documents.${i}.document.id`, id);
      span.setAttribute(`retrieval.documents.${i}.document.score`, 0.9 - i / 10);
    });
    span.end();
  });
}

async function complete(client, messages) {
  const request = { model: 'gpt-4o-mini', messages, tools, temperature: Number(env.TEMPERATURE || 0.2), max_tokens: 256 };
  if (env.STREAM !== '1') {
    return (await client.chat.completions.create(request)).choices[0].message;
  }
  const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  const msg = { role: 'assistant', content: null, tool_calls: [] };
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      if (choice.delta.content) msg.content = (msg.content || '') + choice.delta.content;
      for (const tc of choice.delta.tool_calls || []) {
        const slot = msg.tool_calls[tc.index] || (msg.tool_calls[tc.index] = { id: '', type: 'function', function: { name: '', arguments: '' } });
        slot.id += tc.id || '';
        slot.function.name += (tc.function && tc.function.name) || '';
        slot.function.arguments += (tc.function && tc.function.arguments) || '';
      }
    }
  }
  if (msg.tool_calls.length === 0) delete msg.tool_calls;
  return msg;
}

async function run() {
  const headers = {};
  const session = env.REPLAY_SESSION || env.REPRISE_REPLAY_SESSION;
  if (session) headers['X-Replay-Session'] = session;
  if (env.REPLAY_MODE) headers['X-Replay-Mode'] = env.REPLAY_MODE;
  const client = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY || 'sk-reprise-test-not-a-key', defaultHeaders: headers, maxRetries: 0 });
  const tracer = api.trace.getTracer('weather-agent', '1.0.0');
  return tracer.startActiveSpan('invoke_agent weather-bot', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather-bot', 'gen_ai.provider.name': 'openai', 'gen_ai.conversation.id': 'conv-' + (env.SERVICE_NAME || '') },
  }, async (root) => {
    const out = { toolCalls: [], answer: null };
    try {
      if (env.RETRIEVAL === '1') retrieve(tracer, PROMPT);
      const messages = [{ role: 'system', content: SYSTEM }, { role: 'user', content: PROMPT }];
      for (let turn = 0; turn < 4 && out.answer === null; turn++) {
        const msg = await complete(client, messages);
        if (!msg.tool_calls || msg.tool_calls.length === 0) {
          out.answer = msg.content;
          break;
        }
        messages.push({ role: 'assistant', content: msg.content || null, tool_calls: msg.tool_calls });
        for (const tc of msg.tool_calls) {
          const result = await tracer.startActiveSpan('execute_tool ' + tc.function.name, {
            attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tc.function.name, 'gen_ai.tool.call.id': tc.id, 'gen_ai.tool.call.arguments': tc.function.arguments },
          }, async (span) => {
            const r = await getWeather(JSON.parse(tc.function.arguments));
            span.setAttribute('gen_ai.tool.call.result', r);
            span.end();
            return r;
          });
          out.toolCalls.push({ id: tc.id, name: tc.function.name, arguments: tc.function.arguments, result });
          messages.push({ role: 'tool', tool_call_id: tc.id, content: result });
        }
      }
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
  for (const p of [tracerProvider, loggerProvider]) {
    if (p) await p.forceFlush().catch((e) => process.stderr.write(`flush failed: ${JSON.stringify(e, Object.getOwnPropertyNames(e))} ${e}\n`));
  }
  process.stdout.write(JSON.stringify(out) + '\n');
  for (const p of [tracerProvider, loggerProvider]) {
    if (p) await p.shutdown().catch(() => {});
  }
});
