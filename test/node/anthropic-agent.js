// A tool-using agent on the real @anthropic-ai/sdk (messages.create, or messages.stream with
// STREAM=1), traced by the SDK's own OpenTelemetry spans and, with INSTRUMENTATION, by another
// instrumentation too: the same code records a run and replays it. Prints what it did as JSON
// on stdout.
//
// Environment: ANTHROPIC_BASE_URL; OTLP_ENDPOINT (http://host:port, optional); SERVICE_NAME;
// INSTRUMENTATION (openinference | traceloop | none: the SDK's own spans only); STREAM=1;
// ANTHROPIC_SDK=0 (see below); SYSTEM_PROMPT; REPLAY_SESSION; REPLAY_MODE; OUTPUT_FORMAT (a JSON
// output format object, sent as output_config.format: structured output);
// ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content to record content in the SDK's spans.
'use strict';
const { startTracing, finish, replayHeaders, inAgentSpan } = require('./tracing');

const env = process.env;
const provider = startTracing('anthropic-agent');
if (provider) {
  const instrumentations = {
    openinference: () => new (require('@arizeai/openinference-instrumentation-anthropic').AnthropicInstrumentation)(),
    traceloop: () => new (require('@traceloop/instrumentation-anthropic').AnthropicInstrumentation)({ traceContent: true }),
  };
  if (instrumentations[env.INSTRUMENTATION]) {
    const { registerInstrumentations } = require('@opentelemetry/instrumentation');
    const instrumentation = instrumentations[env.INSTRUMENTATION]();
    registerInstrumentations({ instrumentations: [instrumentation] });
    // The 0.x SDK is installed under an alias the require hook does not know by name.
    if (env.ANTHROPIC_SDK === '0') instrumentation.manuallyInstrument(require('anthropic-sdk-0'));
  }
}
// ANTHROPIC_SDK=0 runs the agent on @anthropic-ai/sdk 0.137.0 (npm alias anthropic-sdk-0), the
// last 0.x release, which OpenLLMetry's Anthropic instrumentation can still patch.
const Anthropic = env.ANTHROPIC_SDK === '0' ? require('anthropic-sdk-0') : require('@anthropic-ai/sdk');

const tools = [{ name: 'get_weather', description: 'Current weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];

async function create(client, request) {
  if (env.STREAM !== '1') return client.messages.create(request);
  return client.messages.stream(request).finalMessage();
}

async function run() {
  const client = new Anthropic({ baseURL: env.ANTHROPIC_BASE_URL, apiKey: 'sk-ant-reprise-test-not-a-key', defaultHeaders: replayHeaders(), maxRetries: 0 });
  const out = { toolCalls: [], answer: null };
  return inAgentSpan('anthropic-agent', 'weather-bot', out, async (tracer) => {
    const messages = [{ role: 'user', content: 'Weather in Paris and Lyon?' }];
    for (let turn = 0; turn < 3 && out.answer === null; turn++) {
      const request = { model: 'claude-haiku-4-5', max_tokens: 512, system: env.SYSTEM_PROMPT || 'You are a weather assistant.', tools, messages };
      if (env.OUTPUT_FORMAT) request.output_config = { format: JSON.parse(env.OUTPUT_FORMAT) };
      const res = await create(client, request);
      const uses = res.content.filter((b) => b.type === 'tool_use');
      if (uses.length === 0) {
        out.answer = res.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
        out.messageId = res.id;
        break;
      }
      messages.push({ role: 'assistant', content: res.content });
      const results = [];
      for (const u of uses) {
        const result = tracer.startActiveSpan('execute_tool get_weather', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': u.name, 'gen_ai.tool.call.id': u.id, 'gen_ai.tool.call.arguments': JSON.stringify(u.input) } }, (span) => {
          const r = JSON.stringify({ city: u.input.city, temperature: 14, sky: 'overcast' });
          span.setAttribute('gen_ai.tool.call.result', r);
          span.end();
          return r;
        });
        out.toolCalls.push({ id: u.id, input: u.input, result });
        results.push({ type: 'tool_result', tool_use_id: u.id, content: result });
      }
      messages.push({ role: 'user', content: results });
    }
  });
}

run().then((out) => finish(provider, out));
