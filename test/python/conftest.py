"""Fixtures shared by the Python end-to-end tests: one reprise collector for the session (OTLP
in, Parquet datasets out, replay extension on), the fake model, and the agent runner.

Needs REPRISE_BIN, the collector built from this repository (scripts/test.sh builds it)."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from fake_openai import FakeOpenAI

HERE = Path(__file__).parent
REPO = HERE.parent.parent

CONFIG = """
extensions:
  replay:
    endpoint: 127.0.0.1:{replay_port}
    directory: {data}
    refresh_interval: 200ms
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{otlp_port}
processors:
  replay_case:
    root_grace_period: 300ms
exporters:
  replay_parquet:
    directory: {data}
    sending_queue:
      batch:
        flush_timeout: 300ms
  nop:
service:
  extensions: [replay]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [replay_parquet]
    logs:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [nop]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str):
    """The decoded JSON of a GET, or None when the server is not (yet) answering 200."""
    try:
        with urllib.request.urlopen(url, timeout=5) as res:
            return json.load(res)
    except OSError:
        return None


class Collector:
    def __init__(self, workdir: Path):
        self.data = workdir / "data"
        self.otlp = f"http://127.0.0.1:{free_port()}"
        self.replay_url = f"http://127.0.0.1:{free_port()}"
        config = workdir / "config.yaml"
        config.write_text(CONFIG.format(replay_port=self.replay_url.rsplit(":", 1)[1], otlp_port=self.otlp.rsplit(":", 1)[1], data=self.data))
        self.log_path = workdir / "collector.log"
        self._log = open(self.log_path, "wb")
        bin_path = os.environ.get("REPRISE_BIN")
        assert bin_path and Path(bin_path).exists(), "set REPRISE_BIN to the collector built from this repository"
        self.process = subprocess.Popen([bin_path, "--config", str(config)], stdout=self._log, stderr=subprocess.STDOUT)
        self.wait_for("the collector", lambda: get_json(f"{self.replay_url}/v1/cases"))

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def wait_for(self, what: str, probe, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while True:
            value = probe()
            if value:
                return value
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}\n{self.log_tail()}")
            time.sleep(0.1)

    def case_of(self, service: str, status: str | None = None) -> dict:
        """The summary of the one case recorded from `service`, waiting until it is served."""

        def probe():
            listing = get_json(f"{self.replay_url}/v1/cases?limit=1000" + (f"&status={status}" if status else ""))
            found = [c for c in (listing or {}).get("cases", []) if c["provenance"]["service_name"] == service]
            return found[0] if found else None

        return self.wait_for(f"the case of {service}", probe)

    def post_otlp(self, signal: str, path: Path):
        request = urllib.request.Request(f"{self.otlp}/v1/{signal}", data=path.read_bytes(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as res:
            assert res.status == 200, res.read()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._log.close()


@pytest.fixture(scope="session")
def collector():
    with tempfile.TemporaryDirectory(prefix="reprise-py-") as workdir:
        c = Collector(Path(workdir))
        yield c
        c.stop()


@pytest.fixture(scope="session")
def reprise_url(collector):
    """Points the reprise_pytest plugin at this session's collector."""
    return collector.replay_url


@pytest.fixture
def model():
    server = FakeOpenAI()
    yield server
    server.shutdown()


def run_agent(env: dict) -> dict:
    """Runs agent.py in its own process (an instrumentation patches the SDK process-wide) and
    returns what it printed."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "TRACELOOP_"))}
    full_env.update({"TRACELOOP_TELEMETRY": "false", "TRACELOOP_METRICS_ENABLED": "false"})
    full_env.update(env)
    done = subprocess.run([sys.executable, str(HERE / "agent.py")], env=full_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"agent failed ({done.returncode}):\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])
