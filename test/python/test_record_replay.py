"""Record the weather agent through the reprise collector with each Python GenAI
instrumentation, check that every run becomes the same accepted case as its Node twin
(test/node), then replay it offline with the Python openai SDK through the replay extension
(JSON and streaming) with zero model calls."""

import json

import openai
import pytest

import agent
from conftest import get_json, run_agent

PROMPT = "What is the weather in Paris today?"
ARGUMENTS = '{"city":"Paris","unit":"celsius"}'
RESULT = '{"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"}'
ANSWER = f"Answer: based on {RESULT} it is mild in Paris."

# What the fake model and the agent make of one run, whatever the instrumentation: the case the
# Node agent's run becomes, seen through the dataset's fields. Tokens: the model answers
# 71+17 and 72+17.
EXPECTED_CASE = {
    "agent_name": "weather-bot",
    "question": PROMPT,
    "answer": ANSWER,
    "tool_calls": [("get_weather", ARGUMENTS, RESULT)],
    "step_kinds": ["llm", "tool", "llm"],
    "usage": (143, 34, 177),
}

# opentelemetry-instrumentation-openai-v2 records no gen_ai.tool.definitions (its util-genai
# invocation has the field; the openai wrapper never fills it), so its case has no tool
# definitions; the others record them.
TOOL_DEFINITIONS = {
    "otel": [],
    "openinference": ["get_weather"],
    "traceloop": ["get_weather"],
    "pydantic-ai": ["get_weather"],
}

# The conventions the processor read each run with: the agent's own invoke_agent and
# execute_tool spans are OTel GenAI; openai-v2 adds its inference-details log events;
# traceloop-sdk 0.62 writes gen_ai.input.messages / gen_ai.output.messages (OTel GenAI) by default.
CONVENTIONS = {
    "otel": ["otel_genai", "otel_genai_events"],
    "openinference": ["openinference", "otel_genai"],
    "traceloop": ["otel_genai"],
    "pydantic-ai": ["otel_genai"],
}

INSTRUMENTATIONS = {
    # opentelemetry-instrumentation-openai-v2 on the latest experimental GenAI conventions, with
    # content both on the spans and in the inference-details events.
    "otel": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_and_event",
    },
    "openinference": {},
    "traceloop": {"TRACELOOP_TRACE_CONTENT": "true"},
    "pydantic-ai": {},
}


def text_of(message: dict | None) -> str | None:
    if not message:
        return None
    return "".join(p["content"] or "" for p in message["parts"] if p["type"] == "text") or None


def case_shape(case: dict) -> dict:
    """The fields a replay depends on, in a form that compares across conventions."""
    usage = case.get("usage") or {}
    return {
        "agent_name": case["agent_name"],
        "question": text_of([m for m in case["input_messages"] if m["role"] == "user"][-1]),
        "answer": text_of(case.get("final_output")),
        "tool_calls": [(t["name"], t["arguments"], t["result"]) for t in case["tool_calls"]],
        "step_kinds": [s["kind"] for s in case["steps"] if s["kind"] != "agent"],
        "tool_definitions": [t["name"] for t in case["tool_definitions"]],
        "usage": (usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")),
    }


@pytest.mark.parametrize("instrumentation", list(INSTRUMENTATIONS))
def test_recorded_run_replays_offline(instrumentation, collector, model, reprise):
    service = f"weather-agent-py-{instrumentation}"
    env = {
        "INSTRUMENTATION": instrumentation,
        "OTLP_ENDPOINT": collector.otlp,
        "SERVICE_NAME": service,
        **INSTRUMENTATIONS[instrumentation],
    }
    recorded = run_agent({**env, "OPENAI_BASE_URL": model.url})
    assert recorded == {
        "toolCalls": [{"id": "call_1_0", "name": "get_weather", "arguments": ARGUMENTS, "result": RESULT}],
        "answer": ANSWER,
    }
    assert model.requests == 2
    model.close_for_replay()

    summary = collector.case_of(service)
    assert summary["status"] == "accepted", json.dumps(summary["reasons"])
    assert summary["provenance"]["conventions"] == CONVENTIONS[instrumentation], summary["provenance"]
    case = get_json(f"{collector.replay_url}/v1/cases/{summary['case_id']}")
    assert case_shape(case) == EXPECTED_CASE | {"tool_definitions": TOOL_DEFINITIONS[instrumentation]}

    # Replay through the plugin's base URL, with the agent's own SDK, JSON then streaming.
    replay_env = {**env, "SERVICE_NAME": f"{service}-replay", "OPENAI_BASE_URL": reprise.base_url(summary["case_id"])}
    for stream in ("", "1"):
        replayed = run_agent(
            {**replay_env, "STREAM": stream, "REPLAY_SESSION": f"{reprise.session}-{stream or 'json'}"}
        )
        assert replayed == recorded, f"stream={stream == '1'}"
    assert model.requests_after_close == 0, "the replay called the model server"

    lyon = "What is the weather in Lyon today?"
    changed = run_agent({**replay_env, "PROMPT": lyon, "REPLAY_SESSION": f"{reprise.session}-strict"})
    assert changed["error"]["status"] == 404
    assert "strict replay: no recorded" in changed["error"]["message"], changed
    assert "messages[1].content[0].text" in changed["error"]["message"], "the 404 names the field that differs"

    reprise.session += "-lenient"
    lenient = run_agent({**replay_env, "PROMPT": lyon, "REPLAY_SESSION": reprise.session, "REPLAY_MODE": "lenient"})
    assert lenient == recorded, "lenient serves the recorded calls in order"
    divergences = reprise.divergences()
    assert len(divergences) == 2, "both calls carry the changed prompt"
    assert all("messages[1].content[0].text" in json.dumps(d) for d in divergences), divergences
    assert model.requests_after_close == 0


def test_replay_in_process_with_the_plugin(collector, model, reprise):
    """The plugin's own path: an openai client built from reprise.openai_kwargs in the test
    process, strict then lenient, JSON and streaming."""
    service = "weather-agent-py-plugin"
    run_agent(
        {
            "INSTRUMENTATION": "otel",
            "OTLP_ENDPOINT": collector.otlp,
            "SERVICE_NAME": service,
            "OPENAI_BASE_URL": model.url,
            **INSTRUMENTATIONS["otel"],
        }
    )
    model.close_for_replay()
    collector.case_of(service)
    case_id = reprise.case_id(agent="weather-bot", service=service)

    client = openai.OpenAI(**reprise.openai_kwargs(case_id))
    first = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": agent.SYSTEM}, {"role": "user", "content": PROMPT}],
        tools=agent.TOOLS,
        temperature=0.2,
        max_tokens=256,
    )
    call = first.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, call.function.arguments) == ("call_1_0", "get_weather", ARGUMENTS)
    assert first.usage.total_tokens == 88

    with pytest.raises(openai.NotFoundError, match="strict replay: no recorded"):
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Lyon?"}])
    # The refusal is in the session's log; reading it tells the plugin the test judged it.
    assert [d["refused"] for d in reprise.divergences()] == [True]

    reprise.mode = "lenient"
    reprise.session += "-lenient"
    lenient = openai.OpenAI(**reprise.openai_kwargs(case_id))
    chunks = list(
        lenient.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Lyon?"}], stream=True
        )
    )
    streamed = [
        tc.function.arguments
        for c in chunks
        for ch in c.choices
        for tc in (ch.delta.tool_calls or [])
        if tc.function and tc.function.arguments
    ]
    assert "".join(streamed) == ARGUMENTS
    assert reprise.divergences(), "the lenient session records what differed"
    assert model.requests_after_close == 0
