"""The model APIs agents use besides Chat Completions, from Python (model_api_agent.py): the
openai SDK's Responses API, the anthropic SDK's Messages API and an OpenAI Agents SDK agent,
each instrumented with an OpenInference package. Each run is recorded through the collector
(JSON and streamed), then replayed through the replay extension by the same unmodified SDK,
JSON and streamed, with the recording model and the hybrid upstreams closed (a request to them
is counted and fails the test): the same tool calls with the same call ids, the same answer
and response id. A changed system prompt is a 404 naming the field in strict mode, and in
hybrid mode goes live at the first call and stays live. A run that lost what replay needs is
quarantined with a reason that says what is missing."""

import json

import pytest

from conftest import get_json, run_agent
from fake_anthropic import FakeAnthropic
from fake_openai import FakeOpenAI

# name: (agent, instrumentation, API, conventions the processor reads the run with, extra
# environment). OpenInference records the model calls; the agent's own invoke_agent and
# execute_tool spans are OTel GenAI.
MATRIX = {
    # openai 3.57 responses.create under openinference-instrumentation-openai 0.1.66
    "responses": ("responses", "openinference", "openai", ["openinference", "otel_genai"], {}),
    # anthropic 2.14 messages.create / messages.stream under openinference-instrumentation-anthropic
    # 3.1.0, with the SDK's own GenAI spans on (its default whenever a tracer provider is set):
    # each is content-less and nested under, or beside, OpenInference's span for the same call,
    # and the normalizer folds it into that one model step.
    "anthropic": (
        "anthropic",
        "openinference-anthropic",
        "anthropic",
        ["openinference", "otel_genai"],
        {},
    ),
    # openai-agents 0.24 Runner.run / run_streamed (Responses) with its own tracing off and the
    # OpenAI client instrumented by openinference-instrumentation-openai, which records the
    # request body; the agent records invoke_agent and execute_tool itself.
    "agents-sdk": ("agents-sdk", "openinference", "openai", ["openinference", "otel_genai"], {}),
    # the same agent under both openinference-instrumentation-openai-agents 2.6.0 (the SDK's
    # trace processor: agent, model and tool spans) and openinference-instrumentation-openai: the
    # agents' span for each model call wraps the client's, and the client's is the model step.
    "agents-sdk-both": ("agents-sdk", "openinference-agents+openai", "openai", ["openinference"], {}),
}
STEP_API = {"openai": "openai.responses", "anthropic": "anthropic.messages"}
CHANGED_INSTRUCTIONS = "You are a terse weather assistant."


def base_url(api: str, root: str) -> dict:
    return {"OPENAI_BASE_URL": f"{root}/openai/v1"} if api == "openai" else {"ANTHROPIC_BASE_URL": f"{root}/anthropic"}


def calls_of(out: dict) -> list:
    """What must match between a recorded and a replayed run: per tool call, the id the tool
    result refers to (Responses call_id, Anthropic tool_use id), name, arguments and result."""
    return [(c["callId"], c["name"], c["arguments"], c["result"]) for c in out["toolCalls"]]


# The Agents SDK's streamed run is not replayable (see QUARANTINED); its JSON recordings still
# replay to Runner.run_streamed.
REPLAYABLE = [
    (name, mode) for name in MATRIX for mode in ("json", "stream") if MATRIX[name][0] != "agents-sdk" or mode == "json"
]


@pytest.mark.parametrize("name,recorded_stream", REPLAYABLE)
def test_recorded_run_replays_offline(name, recorded_stream, collector, upstreams):
    agent, instrumentation, api, conventions, extra_env = MATRIX[name]
    if (name, recorded_stream) == ("anthropic", "stream"):
        extra_env = extra_env | {"SYSTEM_BLOCKS": "1"}  # the system prompt's other form, a list of text blocks
    service = f"py-{name}-{recorded_stream}"
    model = FakeOpenAI() if api == "openai" else FakeAnthropic()
    try:
        env = {
            "AGENT": agent,
            "INSTRUMENTATION": instrumentation,
            "OTLP_ENDPOINT": collector.otlp,
            "SERVICE_NAME": service,
            **extra_env,
        }
        model_url = {"OPENAI_BASE_URL" if api == "openai" else "ANTHROPIC_BASE_URL": model.url}
        stream = "1" if recorded_stream == "stream" else ""
        recorded = run_agent({**env, **model_url, "STREAM": stream}, "model_api_agent.py")
        assert recorded.get("error") is None, recorded
        assert [c[1:3] for c in calls_of(recorded)] == [
            ("get_weather", '{"city":"Paris"}'),
            ("get_weather", '{"city":"Lyon"}'),
        ]
        assert model.requests == 2
        model.close_for_replay()

        summary = collector.case_of(service)
        assert summary["status"] == "accepted", json.dumps(summary["reasons"])
        assert summary["provenance"]["conventions"] == conventions, summary["provenance"]
        case_root = f"{collector.replay_url}/v1/cases/{summary['case_id']}"
        case = get_json(case_root)
        assert [s.get("api") for s in case["steps"] if s["kind"] == "llm"] == [STEP_API[api]] * 2

        replay = {**extra_env, "AGENT": agent, "INSTRUMENTATION": "none", **base_url(api, case_root)}
        session = f"{service}-{summary['case_id']}"
        for replay_stream in ("", "1"):
            replayed = run_agent(
                {**replay, "STREAM": replay_stream, "REPLAY_SESSION": f"{session}-{replay_stream or 'json'}"},
                "model_api_agent.py",
            )
            assert replayed.get("error") is None, replayed
            assert calls_of(replayed) == calls_of(recorded), f"stream={replay_stream == '1'}: same calls, same ids"
            assert replayed["answer"] == recorded["answer"]
            assert replayed["responseId"] == recorded["responseId"], "the recorded response id"
        upstream = getattr(upstreams, api)
        assert (model.requests_after_close, upstream.requests_after_close) == (0, 0), "the replay called a model"

        changed = {**replay, "INSTRUCTIONS": CHANGED_INSTRUCTIONS}
        strict = run_agent({**changed, "REPLAY_SESSION": f"{session}-strict"}, "model_api_agent.py")
        assert strict["error"]["status"] == 404, strict
        assert "messages[0].content[0].text" in strict["error"]["message"], "the 404 names the field that differs"

        live_before = upstream.requests
        upstream.reopen()
        try:
            hybrid = run_agent(
                {**changed, "REPLAY_SESSION": f"{session}-hybrid", "REPLAY_MODE": "hybrid"}, "model_api_agent.py"
            )
        finally:
            upstream.close_for_replay()
        assert hybrid.get("error") is None, hybrid
        assert upstream.requests - live_before == 2, "the first call differs; it and every later call go live"
        assert upstream.credentials[-2:] == model.credentials, (
            "the client's own credentials, as it sent them when recording"
        )
        assert hybrid["answer"] == recorded["answer"]
        divergences = get_json(f"{collector.replay_url}/v1/divergences?session={session}-hybrid")["divergences"]
        assert [(d["live"], [f["type"] for f in d["findings"]]) for d in divergences] == [(True, ["prompt_changed"])]
        assert (model.requests_after_close, upstream.requests_after_close) == (0, 0)
    finally:
        model.shutdown()


# Runs that lose what replay needs: the settings they are recorded with, and the reason each of
# their two model calls gets.
QUARANTINED = {
    # openinference-instrumentation-openai-agents 2.6 records, as llm.invocation_parameters, the
    # settings the Responses API echoed in its response (its id, the dated model that answered)
    # and, as input.value, only the input items: the model the agent asked for is nowhere in the
    # trace, so no replayed request could match.
    "agents-sdk-own-instrumentation": (
        {"INSTRUMENTATION": "openinference-agents"},
        "unparseable_content",
        'llm.invocation_parameters: holds the parameters of response "resp_',
    ),
    # openinference-instrumentation-openai 0.1.66 does not follow the Agents SDK's streamed
    # call (AsyncOpenAI responses.create(stream=True) read through with_raw_response): its
    # output.value is the repr of an unawaited coroutine, and no output message is recorded.
    "agents-sdk-stream": (
        {"INSTRUMENTATION": "openinference", "STREAM": "1"},
        "no_model_output",
        'model call "Response" recorded no output messages',
    ),
}


@pytest.mark.parametrize("name", list(QUARANTINED))
def test_agents_sdk_run_that_lost_evidence_is_quarantined(name, collector):
    settings, code, detail = QUARANTINED[name]
    service = f"py-{name}"
    model = FakeOpenAI()
    try:
        env = {
            "AGENT": "agents-sdk",
            "OTLP_ENDPOINT": collector.otlp,
            "SERVICE_NAME": service,
            "OPENAI_BASE_URL": model.url,
        }
        recorded = run_agent(env | settings, "model_api_agent.py")
    finally:
        model.shutdown()
    assert [c["callId"] for c in recorded["toolCalls"]] == ["call_1_0", "call_1_1"]
    assert recorded["answer"] == "Paris and Lyon: 14 and overcast."
    summary = collector.case_of(service)
    assert summary["status"] == "quarantined"
    assert [r["code"] for r in summary["reasons"]] == [code] * 2, summary["reasons"]
    assert all(r["detail"].startswith(detail) for r in summary["reasons"]), summary["reasons"]
