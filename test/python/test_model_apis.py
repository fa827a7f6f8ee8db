"""The model APIs agents use besides Chat Completions, from Python (model_api_agent.py): the
openai SDK's Responses API under openinference-instrumentation-openai, the anthropic SDK's
Messages API under openinference-instrumentation-anthropic, and an OpenAI Agents SDK agent
under openinference-instrumentation-openai-agents. Each run is recorded through the collector
(JSON and streamed), then replayed through the replay extension by the same unmodified SDK,
JSON and streamed, with the recording model closed and the hybrid upstreams closed: the same
tool calls with the same call ids, the same answer and response id, no model call. A changed
system prompt is a 404 naming the field in strict mode, and in hybrid mode goes live at the
first call and stays live."""

import json

import pytest

from conftest import get_json, run_agent
from fake_anthropic import FakeAnthropic
from fake_openai import FakeOpenAI

# agent, instrumentation, the API (which SDK base URL, which upstream), and the conventions the
# processor reads the run with: OpenInference for the model calls, OTel GenAI for the agent's
# own invoke_agent and execute_tool spans.
MATRIX = {
    "responses": ("responses", "openinference", "openai", ["openinference", "otel_genai"]),
}
CHANGED_INSTRUCTIONS = "You are a terse weather assistant."


def base_url(api: str, root: str) -> dict:
    return {"OPENAI_BASE_URL": f"{root}/openai/v1"} if api == "openai" else {"ANTHROPIC_BASE_URL": f"{root}/anthropic"}


def calls_of(out: dict) -> list:
    """What must match between a recorded and a replayed run: per tool call, the id the tool
    result refers to (Responses call_id, Anthropic tool_use id), name, arguments and result."""
    return [(c["callId"], c["name"], c["arguments"], c["result"]) for c in out["toolCalls"]]


@pytest.mark.parametrize("recorded_stream", ["json", "stream"])
@pytest.mark.parametrize("name", list(MATRIX))
def test_recorded_run_replays_offline(name, recorded_stream, collector, upstreams):
    agent, instrumentation, api, conventions = MATRIX[name]
    service = f"py-{name}-{recorded_stream}"
    model = FakeOpenAI() if api == "openai" else FakeAnthropic()
    try:
        env = {
            "AGENT": agent,
            "INSTRUMENTATION": instrumentation,
            "OTLP_ENDPOINT": collector.otlp,
            "SERVICE_NAME": service,
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

        replay = {"AGENT": agent, "INSTRUMENTATION": "none", **base_url(api, case_root)}
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
        assert hybrid["answer"] == recorded["answer"]
        divergences = get_json(f"{collector.replay_url}/v1/divergences?session={session}-hybrid")["divergences"]
        assert [(d["live"], [f["type"] for f in d["findings"]]) for d in divergences] == [(True, ["prompt_changed"])]
        assert (model.requests_after_close, upstream.requests_after_close) == (0, 0)
    finally:
        model.shutdown()


STEP_API = {"openai": "openai.responses", "anthropic": "anthropic.messages"}
