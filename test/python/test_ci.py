"""`reprise ci` with the Python agent: a run recorded through the collector under
opentelemetry-instrumentation-openai-v2 is replayed through the same agent, unchanged (passes,
zero model calls) and with another system prompt (fails with the prompt change and what the
strict replay could then no longer serve), with a JUnit report."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import run_agent
from test_record_replay import INSTRUMENTATIONS

HERE = Path(__file__).parent


def reprise_ci(collector, case_id: str, workdir: Path, extra_env: dict) -> tuple[int, dict, ET.Element, str]:
    report, junit = workdir / "ci.json", workdir / "junit.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    env.update(
        {
            "INSTRUMENTATION": "otel",
            "SERVICE_NAME": "weather-agent-py-ci-replay",
            "REPRISE_SCRUB_KEY": "reprise-python-tests",  # the key the session's collector scrubbed with
            **INSTRUMENTATIONS["otel"],
            **extra_env,
        }
    )
    done = subprocess.run(
        [os.environ["REPRISE_BIN"], "ci", "--dataset", str(collector.data), "--case", case_id,
         "--json", str(report), "--junit", str(junit), "--", sys.executable, str(HERE / "agent.py")],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done.returncode, json.loads(report.read_text()), ET.parse(junit).getroot(), done.stderr


def test_reprise_ci_replays_the_python_agent(collector, model, tmp_path):
    service = "weather-agent-py-ci"
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
    case_id = collector.case_of(service, status="accepted")["case_id"]

    code, report, junit, stderr = reprise_ci(collector, case_id, tmp_path, {})
    assert code == 0, stderr
    assert (report["cases"], report["passed"]) == (1, 1), report["results"][0]
    assert report["results"][0]["failing"] == []
    assert junit.get("tests") == "1" and junit.get("failures") == "0"
    assert model.requests_after_close == 0, "the replay called the model server"

    code, report, junit, stderr = reprise_ci(
        collector, case_id, tmp_path, {"SYSTEM_PROMPT": "You are a terse weather assistant."}
    )
    assert code == 1, stderr
    # The changed prompt has no recorded answer: the replay server refuses it (replay_miss) and
    # the agent stops there, so the calls after it are reported removed.
    types = sorted({f["type"] for f in report["results"][0]["failing"]})
    assert types == [
        "answer_changed",
        "model_call_removed",
        "prompt_changed",
        "replay_miss",
        "tool_call_removed",
    ], report["results"][0]
    failure = junit.find("./testsuite/testcase/failure")
    assert failure is not None and "prompt_changed" in failure.get("message"), ET.tostring(junit)
    assert model.requests_after_close == 0


def test_reprise_ci_replays_a_pydantic_ai_agent(dataset, collector, tmp_path):
    """pydantic-ai emits its own spans: under `reprise ci` they go to OTEL_EXPORTER_OTLP_ENDPOINT,
    as the instrumentations' do, or the case fails with "the command emitted no agent run"."""
    code, report, _, stderr = reprise_ci(
        collector, dataset.accepted["case_id"], tmp_path, {"INSTRUMENTATION": "pydantic-ai"}
    )
    assert code == 0, (stderr, report["results"][0])
    assert report["results"][0]["failing"] == []
