"""A small tool-using agent on the Python openai SDK, the twin of test/node/agent.js.

The same code records a run (its base URL pointed at a model server, its telemetry sent to the
collector) and replays it (its base URL pointed at the replay extension). It prints what it did
as one JSON line on stdout: {"toolCalls": [{id, name, arguments, result}], "answer"} or
{"error": {"status", "message"}}.

Each run is its own process because an instrumentation patches the openai SDK for the whole
process, once.

Environment: OPENAI_BASE_URL; OTLP_ENDPOINT (http://host:port, optional); INSTRUMENTATION
(otel | openinference | traceloop | pydantic-ai | none; model_api_agent.py adds
openinference-anthropic, openinference-agents and openinference-agents+openai); SERVICE_NAME; STREAM=1; PROMPT;
REPLAY_SESSION; REPLAY_MODE (strict | lenient); SYSTEM_PROMPT (what a changed agent would change).
Under `reprise ci`, OTEL_EXPORTER_OTLP_ENDPOINT stands in for OTLP_ENDPOINT. The
instrumentations read their own variables too (OTEL_SEMCONV_STABILITY_OPT_IN,
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT).
"""

import asyncio
import json
import os
import sys

from opentelemetry import trace

SYSTEM = (
    os.environ.get("SYSTEM_PROMPT") or "You are a weather assistant. Use get_weather(city, unit) for live conditions."
)
PROMPT = os.environ.get("PROMPT") or "What is the weather in Paris today?"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]
API_KEY = "sk-reprise-test-not-a-key"


def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather for a city"""
    # Compact separators: the same bytes as JSON.stringify in the Node agent.
    return json.dumps({"city": city, "temperature": 14, "unit": unit, "sky": "overcast"}, separators=(",", ":"))


def otlp_endpoint() -> str | None:
    """Where the run's telemetry goes: OTLP_ENDPOINT, or under `reprise ci` its receiver."""
    return os.environ.get("OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")


def setup_telemetry(instrumentation: str):
    """Installs the SDK providers exporting OTLP/HTTP to the collector, then the instrumentation.

    Returns the providers to flush at exit (empty when nothing is recorded)."""
    endpoint = otlp_endpoint()
    if not endpoint or instrumentation == "none":
        return []
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    service = os.environ.get("SERVICE_NAME", "weather-agent")
    resource = Resource.create({"service.name": service, "service.version": "1.0.0"})
    span_exporter = OTLPSpanExporter(endpoint=endpoint + "/v1/traces")
    if instrumentation == "traceloop":
        from traceloop.sdk import Traceloop
        from traceloop.sdk.instruments import Instruments

        # Traceloop builds the tracer provider itself; give it our exporter (never its cloud
        # endpoint) and only the openai instrumentation.
        Traceloop.init(
            app_name=service,
            exporter=span_exporter,
            instruments={Instruments.OPENAI},
            telemetry_enabled=False,
            resource_attributes={"service.version": "1.0.0"},
        )
        tracer_provider = trace.get_tracer_provider()
    else:
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
        trace.set_tracer_provider(tracer_provider)
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(endpoint=endpoint + "/v1/logs")))
    set_logger_provider(logger_provider)

    if instrumentation == "otel":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    elif instrumentation == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif instrumentation == "openinference-anthropic":
        from openinference.instrumentation.anthropic import AnthropicInstrumentor

        AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
    elif instrumentation in ("openinference-agents", "openinference-agents+openai"):
        # Registers itself as the Agents SDK's only trace processor (exclusive_processor,
        # its default), which also removes the SDK's exporter to OpenAI's trace backend.
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider)
        if instrumentation.endswith("+openai"):
            from openinference.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif instrumentation == "traceloop":
        pass  # instrumented by Traceloop.init above
    elif instrumentation == "pydantic-ai":
        pass  # pydantic-ai instruments itself: Agent(instrument=...) in run_pydantic_ai
    else:
        raise SystemExit(f"unknown INSTRUMENTATION {instrumentation!r}")
    return [tracer_provider, logger_provider]


def replay_headers() -> dict:
    headers = {}
    if os.environ.get("REPLAY_SESSION"):
        headers["X-Replay-Session"] = os.environ["REPLAY_SESSION"]
    if os.environ.get("REPLAY_MODE"):
        headers["X-Replay-Mode"] = os.environ["REPLAY_MODE"]
    return headers


def client_options() -> dict:
    return {
        "base_url": os.environ["OPENAI_BASE_URL"],
        "api_key": API_KEY,
        "default_headers": replay_headers(),
        "max_retries": 0,
    }


def complete(client, messages: list) -> dict:
    """One chat completion, as a message dict; streamed and reassembled when STREAM=1."""
    request = {"model": "gpt-4o-mini", "messages": messages, "tools": TOOLS, "temperature": 0.2, "max_tokens": 256}
    if os.environ.get("STREAM") != "1":
        return client.chat.completions.create(**request).choices[0].message.model_dump(exclude_none=True)
    stream = client.chat.completions.create(**request, stream=True, stream_options={"include_usage": True})
    msg = {"role": "assistant", "content": None, "tool_calls": []}
    for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                msg["content"] = (msg["content"] or "") + choice.delta.content
            for tc in choice.delta.tool_calls or []:
                while len(msg["tool_calls"]) <= tc.index:
                    msg["tool_calls"].append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
                slot = msg["tool_calls"][tc.index]
                slot["id"] += tc.id or ""
                slot["function"]["name"] += (tc.function and tc.function.name) or ""
                slot["function"]["arguments"] += (tc.function and tc.function.arguments) or ""
    if not msg["tool_calls"]:
        del msg["tool_calls"]
    return msg


def run_openai() -> dict:
    """The agent loop on the bare openai SDK, with the same spans as the Node agent."""
    import openai

    client = openai.OpenAI(**client_options())
    tracer = trace.get_tracer("weather-agent", "1.0.0")
    out = {"toolCalls": [], "answer": None}
    root_attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather-bot",
        "gen_ai.provider.name": "openai",
        "gen_ai.conversation.id": "conv-" + os.environ.get("SERVICE_NAME", ""),
    }
    with tracer.start_as_current_span(
        "invoke_agent weather-bot", attributes=root_attributes, record_exception=False, set_status_on_exception=False
    ) as root:
        try:
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]
            for _ in range(4):
                msg = complete(client, messages)
                if not msg.get("tool_calls"):
                    out["answer"] = msg.get("content")
                    break
                messages.append({"role": "assistant", "content": msg.get("content"), "tool_calls": msg["tool_calls"]})
                for tc in msg["tool_calls"]:
                    name, arguments = tc["function"]["name"], tc["function"]["arguments"]
                    tool_attributes = {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": name,
                        "gen_ai.tool.call.id": tc["id"],
                        "gen_ai.tool.call.arguments": arguments,
                    }
                    with tracer.start_as_current_span("execute_tool " + name, attributes=tool_attributes) as span:
                        result = get_weather(**json.loads(arguments))
                        span.set_attribute("gen_ai.tool.call.result", result)
                    out["toolCalls"].append({"id": tc["id"], "name": name, "arguments": arguments, "result": result})
                    messages.append({"role": "tool", "tool_call_id": tc["id"], "content": result})
        except openai.APIStatusError as err:
            out["error"] = {"status": err.status_code, "message": err.message}
            root.set_status(trace.StatusCode.ERROR)
    return out


def run_pydantic_ai() -> dict:
    """The same agent written with pydantic-ai, which emits its own GenAI spans
    (invoke_agent, chat, execute_tool) with content."""
    import openai
    from pydantic_ai import Agent, ModelSettings
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    if otlp_endpoint():
        # pydantic-ai's own OpenTelemetry output (its default data format), on the global
        # tracer provider set up above, with prompts, completions and tool arguments.
        Agent.instrument_all(InstrumentationSettings(include_content=True))
    model = OpenAIChatModel(
        "gpt-4o-mini", provider=OpenAIProvider(openai_client=openai.AsyncOpenAI(**client_options()))
    )
    agent = Agent(
        model,
        name="weather-bot",
        system_prompt=SYSTEM,
        tools=[get_weather],
        model_settings=ModelSettings(temperature=0.2, max_tokens=256),
    )

    async def run():
        if os.environ.get("STREAM") != "1":
            result = await agent.run(PROMPT)
            return result.output, result.all_messages()
        async with agent.run_stream(PROMPT) as result:
            return await result.get_output(), result.all_messages()

    out = {"toolCalls": [], "answer": None}
    try:
        answer, messages = asyncio.run(run())
    except ModelHTTPError as err:
        body = err.body if isinstance(err.body, dict) else {}
        out["error"] = {"status": err.status_code, "message": body.get("message", str(err))}
        return out
    results = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                results[part.tool_call_id] = part.content
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                out["toolCalls"].append(
                    {
                        "id": part.tool_call_id,
                        "name": part.tool_name,
                        "arguments": part.args_as_json_str(),
                        "result": results.get(part.tool_call_id),
                    }
                )
    out["answer"] = answer
    return out


def report(out: dict, providers: list):
    """Flushes the telemetry, then prints what the agent did (the test reads it after the
    process exits, so the run is on its way to the collector by then)."""
    for provider in providers:
        if not provider.force_flush(10_000):
            print(f"flush of {type(provider).__name__} failed", file=sys.stderr)
    print(json.dumps(out))
    for provider in providers:
        provider.shutdown()


def main():
    instrumentation = os.environ.get("INSTRUMENTATION", "none")
    providers = setup_telemetry(instrumentation)
    report(run_pydantic_ai() if instrumentation == "pydantic-ai" else run_openai(), providers)


if __name__ == "__main__":
    main()
