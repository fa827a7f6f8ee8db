"""Tool-using agents on the model APIs agents use in 2026, beside agent.py (Chat Completions):

- AGENT=responses: the openai SDK's client.responses.create, two parallel function calls, then
  an answer (the twin of test/node/responses-agent.js);
- AGENT=anthropic: the anthropic SDK's messages.create, or messages.stream when STREAM=1, two
  parallel tool_use blocks, then an answer (the twin of test/node/anthropic-agent.js);
- AGENT=agents-sdk: an OpenAI Agents SDK agent with a function tool on its default model, the
  Responses API; Runner.run, or Runner.run_streamed when STREAM=1.

The same code records a run (base URL at a model server, telemetry to the collector) and
replays it (base URL at the replay extension). It prints one JSON line:
{"toolCalls": [{id, callId, name, arguments, result}], "answer", "responseId"} or
{"error": {"status", "message"}}.

Environment: AGENT; OPENAI_BASE_URL or ANTHROPIC_BASE_URL; OTLP_ENDPOINT; INSTRUMENTATION
(openinference | openinference-anthropic | openinference-agents | openinference-agents+openai | none); SERVICE_NAME;
STREAM=1; PROMPT; INSTRUCTIONS (the system prompt a changed agent would change); SYSTEM_BLOCKS=1;
REPLAY_SESSION; REPLAY_MODE (strict | lenient | hybrid).
"""

import asyncio
import json
import os

from opentelemetry import trace

from agent import API_KEY, replay_headers, report, setup_telemetry

INSTRUCTIONS = os.environ.get("INSTRUCTIONS") or "You are a weather assistant."
PROMPT = os.environ.get("PROMPT") or "Weather in Paris and Lyon?"
STREAM = os.environ.get("STREAM") == "1"
DESCRIPTION = "Current weather for a city"
CITY_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def get_weather(city: str) -> str:
    """Current weather for a city"""
    return json.dumps({"city": city, "temperature": 14, "sky": "overcast"}, separators=(",", ":"))


def openai_client(cls):
    return cls(base_url=os.environ["OPENAI_BASE_URL"], api_key=API_KEY, default_headers=replay_headers(), max_retries=0)


def run_tool(tracer, call_id: str, arguments: str) -> str:
    """Runs get_weather under an execute_tool span, as an agent framework would."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": arguments,
    }
    with tracer.start_as_current_span("execute_tool get_weather", attributes=attributes) as span:
        result = get_weather(**json.loads(arguments))
        span.set_attribute("gen_ai.tool.call.result", result)
    return result


def agent_span(tracer, provider: str):
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather-bot",
        "gen_ai.provider.name": provider,
    }
    return tracer.start_as_current_span(
        "invoke_agent weather-bot", attributes=attributes, record_exception=False, set_status_on_exception=False
    )


def run_responses(out: dict):
    import openai

    client = openai_client(openai.OpenAI)
    tracer = trace.get_tracer("responses-agent")
    tools = [
        {
            "type": "function",
            "name": "get_weather",
            "description": DESCRIPTION,
            "strict": False,
            "parameters": CITY_SCHEMA,
        }
    ]
    request = {"model": "gpt-4.1-mini", "instructions": INSTRUCTIONS, "tools": tools, "temperature": 0.2}
    items = [{"role": "user", "content": PROMPT}]
    with agent_span(tracer, "openai") as root:
        try:
            for _ in range(3):
                if STREAM:
                    events = list(client.responses.create(**request, input=items, stream=True))
                    assert events[-1].type == "response.completed", events[-1].type
                    response = events[-1].response
                else:
                    response = client.responses.create(**request, input=items)
                calls = [item for item in response.output if item.type == "function_call"]
                if not calls:
                    out["answer"], out["responseId"] = response.output_text, response.id
                    return
                items += [
                    {
                        "type": "function_call",
                        "id": c.id,
                        "call_id": c.call_id,
                        "name": c.name,
                        "arguments": c.arguments,
                    }
                    for c in calls
                ]
                for c in calls:
                    result = run_tool(tracer, c.call_id, c.arguments)
                    out["toolCalls"].append(
                        {"id": c.id, "callId": c.call_id, "name": c.name, "arguments": c.arguments, "result": result}
                    )
                    items.append({"type": "function_call_output", "call_id": c.call_id, "output": result})
        except openai.APIStatusError as err:
            out["error"] = {"status": err.status_code, "message": err.message}
            root.set_status(trace.StatusCode.ERROR)


def run_anthropic(out: dict):
    import anthropic

    client = anthropic.Anthropic(
        base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=API_KEY, default_headers=replay_headers(), max_retries=0
    )
    tracer = trace.get_tracer("anthropic-agent")
    tools = [{"name": "get_weather", "description": DESCRIPTION, "input_schema": CITY_SCHEMA}]
    # anthropic 2.x takes no temperature: the current models fix it.
    # SYSTEM_BLOCKS=1 sends the system prompt as a list of text blocks, the API's other form.
    system = [{"type": "text", "text": INSTRUCTIONS}] if os.environ.get("SYSTEM_BLOCKS") == "1" else INSTRUCTIONS
    request = {"model": "claude-haiku-4-5", "max_tokens": 256, "system": system, "tools": tools}
    messages = [{"role": "user", "content": PROMPT}]
    with agent_span(tracer, "anthropic") as root:
        try:
            for _ in range(3):
                if STREAM:
                    with client.messages.stream(**request, messages=messages) as stream:
                        message = stream.get_final_message()
                else:
                    message = client.messages.create(**request, messages=messages)
                uses = [block for block in message.content if block.type == "tool_use"]
                if not uses:
                    out["answer"] = "".join(block.text for block in message.content if block.type == "text")
                    out["responseId"] = message.id
                    return
                messages.append(
                    {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]}
                )
                results = []
                for use in uses:
                    arguments = json.dumps(use.input, separators=(",", ":"))
                    result = run_tool(tracer, use.id, arguments)
                    out["toolCalls"].append(
                        {"id": use.id, "callId": use.id, "name": use.name, "arguments": arguments, "result": result}
                    )
                    results.append({"type": "tool_result", "tool_use_id": use.id, "content": result})
                messages.append({"role": "user", "content": results})
        except anthropic.APIStatusError as err:
            out["error"] = {"status": err.status_code, "message": err.message}
            root.set_status(trace.StatusCode.ERROR)


def run_agents_sdk(out: dict):
    import openai
    from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner, function_tool
    from agents.items import ToolCallItem, ToolCallOutputItem
    from agents.tool_context import ToolContext
    from agents.tracing import get_trace_provider

    # Nothing may leave the machine: the SDK's tracing is off (main), or OpenInference's
    # processor replaced the SDK's exporter to OpenAI's trace backend. The SDK cannot list its
    # processors, so this reads the default provider's private list.
    provider = get_trace_provider()
    if not provider._disabled:
        registered = [type(p).__name__ for p in provider._multi_processor._processors]
        assert registered == ["OpenInferenceTracingProcessor"], f"the Agents SDK's trace processors: {registered}"

    # With the SDK's tracing off (INSTRUMENTATION not openinference-agents*) the agent's own
    # code records its run: an invoke_agent span around it and an execute_tool span per call.
    tracer = trace.get_tracer("agents-sdk-agent") if provider._disabled else None

    @function_tool(name_override="get_weather", description_override=DESCRIPTION)
    def weather(ctx: ToolContext, city: str) -> str:
        if tracer is None:
            return get_weather(city)
        return run_tool(tracer, ctx.tool_call_id, ctx.tool_arguments)

    agent = Agent(
        name="weather-bot",
        instructions=INSTRUCTIONS,
        tools=[weather],
        model=OpenAIResponsesModel(model="gpt-4.1-mini", openai_client=openai_client(openai.AsyncOpenAI)),
        model_settings=ModelSettings(temperature=0.2),
    )

    async def run():
        if tracer is not None:
            with agent_span(tracer, "openai"):
                return await run_agent()
        return await run_agent()

    async def run_agent():
        if not STREAM:
            return await Runner.run(agent, PROMPT)
        result = Runner.run_streamed(agent, PROMPT)
        async for _ in result.stream_events():
            pass
        return result

    try:
        result = asyncio.run(run())
    except openai.APIStatusError as err:
        out["error"] = {"status": err.status_code, "message": err.message}
        return
    outputs = {
        item.raw_item["call_id"]: item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)
    }
    for item in result.new_items:
        if isinstance(item, ToolCallItem):
            c = item.raw_item
            out["toolCalls"].append(
                {
                    "id": c.id,
                    "callId": c.call_id,
                    "name": c.name,
                    "arguments": c.arguments,
                    "result": outputs.get(c.call_id),
                }
            )
    out["answer"], out["responseId"] = result.final_output, result.last_response_id


AGENTS = {"responses": run_responses, "anthropic": run_anthropic, "agents-sdk": run_agents_sdk}


def main():
    instrumentation = os.environ.get("INSTRUMENTATION", "none")
    if os.environ["AGENT"] == "agents-sdk" and not instrumentation.startswith("openinference-agents"):
        from agents import set_tracing_disabled

        set_tracing_disabled(True)
    providers = setup_telemetry(instrumentation)
    out = {"toolCalls": [], "answer": None}
    AGENTS[os.environ["AGENT"]](out)
    report(out, providers)


if __name__ == "__main__":
    main()
