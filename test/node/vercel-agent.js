// A tool-using agent on the Vercel AI SDK (generateText, or streamText with STREAM=1) with
// experimental_telemetry on: PROVIDER=openai uses @ai-sdk/openai's openai(…) (the Responses
// API), PROVIDER=anthropic @ai-sdk/anthropic's anthropic(…) (Messages). The same code records a
// run and replays it. Prints what it did as JSON on stdout.
//
// Environment: PROVIDER; BASE_URL (the provider's base URL; unset, the provider package reads
// OPENAI_BASE_URL or ANTHROPIC_BASE_URL, as under `reprise ci`); OTLP_ENDPOINT (http://host:port,
// optional); SERVICE_NAME; STREAM=1; SYSTEM_PROMPT; REPLAY_SESSION; REPLAY_MODE.
'use strict';
const { startTracing, finish, replayHeaders } = require('./tracing');

const env = process.env;
const provider = startTracing('vercel-agent');
const { generateText, streamText, tool, stepCountIs } = require('ai');
const { createOpenAI } = require('@ai-sdk/openai');
const { createAnthropic } = require('@ai-sdk/anthropic');
const { z } = require('zod');

async function run() {
  const headers = replayHeaders();
  const model = env.PROVIDER === 'anthropic'
    ? createAnthropic({ baseURL: env.BASE_URL || undefined, apiKey: 'sk-ant-reprise-test-not-a-key', headers })('claude-haiku-4-5')
    : createOpenAI({ baseURL: env.BASE_URL || undefined, apiKey: 'sk-reprise-test-not-a-key', headers })('gpt-4.1-mini');
  const out = { toolCalls: [], answer: null };
  const tools = {
    get_weather: tool({
      description: 'Current weather for a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => JSON.stringify({ city, temperature: 14, sky: 'overcast' }),
    }),
  };
  const request = { model, system: env.SYSTEM_PROMPT || 'You are a weather assistant.', prompt: 'Weather in Paris and Lyon?', tools,
    stopWhen: stepCountIs(3), maxRetries: 0, temperature: 0.2, experimental_telemetry: { isEnabled: true, functionId: 'weather-bot' } };
  try {
    const result = env.STREAM === '1' ? streamText({ ...request, onError: ({ error }) => { out.error = { status: error.statusCode, message: error.message }; } }) : await generateText(request);
    const steps = await result.steps;
    for (const step of steps) {
      for (const c of step.toolCalls) {
        const r = step.toolResults.find((t) => t.toolCallId === c.toolCallId);
        out.toolCalls.push({ id: c.toolCallId, input: c.input, result: r && r.output });
      }
    }
    out.answer = await result.text;
    out.responseIds = steps.map((s) => s.response.id);
  } catch (err) {
    out.error = { status: err.statusCode, message: err.message };
  }
  return out;
}

run().then((out) => finish(provider, out));
