// Tracing shared by the agents: with OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT, which
// `reprise ci` sets) set, spans go over OTLP/HTTP to it under service.name SERVICE_NAME (or the
// agent's default), with async context propagation.
'use strict';
const api = require('@opentelemetry/api');
const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');

// startTracing registers the global tracer provider and returns it, or undefined when
// neither endpoint is set (a replay run records nothing).
function startTracing(defaultService) {
  const env = process.env;
  const endpoint = env.OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return undefined;
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': env.SERVICE_NAME || defaultService }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: endpoint + '/v1/traces' }) })] });
  api.trace.setGlobalTracerProvider(provider);
  return provider;
}

// finish flushes the spans, prints out as the agent's last line of JSON and shuts tracing down.
async function finish(provider, out) {
  if (provider) await provider.forceFlush();
  process.stdout.write(JSON.stringify(out) + '\n');
  if (provider) await provider.shutdown();
}

// replayHeaders are the replay extension's session and mode headers, from REPLAY_SESSION and
// REPLAY_MODE when set.
function replayHeaders() {
  const headers = {};
  if (process.env.REPLAY_SESSION) headers['X-Replay-Session'] = process.env.REPLAY_SESSION;
  if (process.env.REPLAY_MODE) headers['X-Replay-Mode'] = process.env.REPLAY_MODE;
  return headers;
}

// inAgentSpan runs body(tracer) inside the run's root span "invoke_agent <agent>" and resolves
// with out; an error body throws is out.error ({status, message}) and fails the span.
function inAgentSpan(tracerName, agent, out, body) {
  const tracer = api.trace.getTracer(tracerName);
  return tracer.startActiveSpan(`invoke_agent ${agent}`, { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agent } }, async (root) => {
    try {
      await body(tracer);
    } catch (err) {
      out.error = { status: err.status, message: err.message };
      root.setStatus({ code: api.SpanStatusCode.ERROR });
    } finally {
      root.end();
    }
    return out;
  });
}

module.exports = { startTracing, finish, replayHeaders, inAgentSpan };
