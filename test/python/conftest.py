"""Fixtures shared by the Python end-to-end tests: one reprise collector for the session (OTLP
in, Parquet datasets out, replay extension on), the fake model, and the agent runner.

Needs REPRISE_BIN, the collector built from this repository (scripts/test-python.sh builds it)."""

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

from fake_anthropic import FakeAnthropic
from fake_openai import FakeOpenAI

HERE = Path(__file__).parent
REPO = HERE.parent.parent

# The shipped local default (persistent queue, scrubbing, replay extension), moved to free
# loopback ports and a temporary directory, with short timers so a case is on disk and served
# within about a second of its root span ending.
LOCAL_CONFIG = REPO / "config" / "local.yaml"


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


class Upstreams:
    """The live model APIs hybrid replay forwards to: one OpenAI and one Anthropic fake, closed
    (every request counted and refused) unless a test opens them for a hybrid session."""

    def __init__(self):
        self.openai = FakeOpenAI()
        self.anthropic = FakeAnthropic()
        for server in (self.openai, self.anthropic):
            server.close_for_replay()

    def shutdown(self):
        self.openai.shutdown()
        self.anthropic.shutdown()


class Collector:
    def __init__(self, workdir: Path, upstreams: Upstreams):
        self.data = workdir / "data"
        self.otlp = f"http://127.0.0.1:{free_port()}"
        self.replay_url = f"http://127.0.0.1:{free_port()}"
        overrides = {
            "extensions::file_storage::directory": workdir / "queue",
            "extensions::replay::endpoint": self.replay_url.removeprefix("http://"),
            "extensions::replay::directory": self.data,
            "extensions::replay::refresh_interval": "200ms",
            "receivers::otlp::protocols::grpc::endpoint": f"127.0.0.1:{free_port()}",
            "receivers::otlp::protocols::http::endpoint": self.otlp.removeprefix("http://"),
            "processors::replay_case::root_grace_period": "300ms",
            "exporters::replay_parquet::directory": self.data,
            "exporters::replay_parquet::sending_queue::batch::flush_timeout": "300ms",
            # each batch its own file at once: the tests wait for cases, not for small datasets
            "exporters::replay_parquet::file_max_age": "0s",
            "extensions::replay::upstream::openai::endpoint": upstreams.openai.url,
            "extensions::replay::upstream::anthropic::endpoint": upstreams.anthropic.url,
            "service::telemetry::metrics::level": "none",
        }
        self.log_path = workdir / "collector.log"
        self._log = open(self.log_path, "wb")
        bin_path = os.environ.get("REPRISE_BIN")
        assert bin_path and Path(bin_path).exists(), "set REPRISE_BIN to the collector built from this repository"
        self.process = subprocess.Popen(
            [bin_path, "--config", str(LOCAL_CONFIG), *(f"--set={key}={value}" for key, value in overrides.items())],
            env={**os.environ, "REPRISE_SCRUB_KEY": "reprise-python-tests"},
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
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
        request = urllib.request.Request(
            f"{self.otlp}/v1/{signal}", data=path.read_bytes(), headers={"Content-Type": "application/json"}
        )
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
def upstreams():
    servers = Upstreams()
    yield servers
    servers.shutdown()


@pytest.fixture(scope="session")
def collector(upstreams):
    with tempfile.TemporaryDirectory(prefix="reprise-py-") as workdir:
        c = Collector(Path(workdir), upstreams)
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


def run_agent(env: dict, script: str = "agent.py") -> dict:
    """Runs agent.py (or script) in its own process (an instrumentation patches the SDK
    process-wide) and returns what it printed."""
    prefixes = ("OTEL_", "OPENAI_", "ANTHROPIC_", "TRACELOOP_")
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    full_env.update({"TRACELOOP_TELEMETRY": "false", "TRACELOOP_METRICS_ENABLED": "false"})
    full_env.update(env)
    done = subprocess.run(
        [sys.executable, str(HERE / script)], env=full_env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"agent failed ({done.returncode}):\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


class Dataset:
    """A dataset root this session just recorded, and the cases in it."""

    def __init__(self, root: Path, accepted: dict, quarantined: dict, quickstart: dict, quickstart_quarantined: dict):
        self.root = root
        self.accepted = accepted  # summary of the Python agent's run (pydantic-ai)
        self.quarantined = quarantined  # summary of the Python agent's run without content capture
        self.quickstart = quickstart  # the README quick start's weather-bot run
        self.quickstart_quarantined = quickstart_quarantined  # the quick start's run without content


@pytest.fixture(scope="session")
def dataset(collector) -> Dataset:
    """Records, through the session's collector, what the notebook and the README snippets
    read: the weather agent with pydantic-ai's instrumentation (accepted), the same agent with
    opentelemetry-instrumentation-openai-v2 and content capture off (quarantined), and the
    README quick start's telemetry (testdata/otlp/otel-events and otel-nocontent). Returns once
    the replay extension, which reads the datasets from disk, serves all four."""
    model = FakeOpenAI()
    try:
        run_agent(
            {
                "INSTRUMENTATION": "pydantic-ai",
                "OTLP_ENDPOINT": collector.otlp,
                "SERVICE_NAME": "dataset-pydantic-ai",
                "OPENAI_BASE_URL": model.url,
            }
        )
        run_agent(
            {
                "INSTRUMENTATION": "otel",
                "OTLP_ENDPOINT": collector.otlp,
                "SERVICE_NAME": "dataset-no-content",
                "OPENAI_BASE_URL": model.url,
                "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            }
        )
    finally:
        model.shutdown()
    otlp = REPO / "testdata" / "otlp"
    collector.post_otlp("logs", otlp / "otel-events" / "logs.json")
    collector.post_otlp("traces", otlp / "otel-events" / "traces.json")
    collector.post_otlp("traces", otlp / "otel-nocontent" / "traces.json")
    recorded = Dataset(
        collector.data,
        accepted=collector.case_of("dataset-pydantic-ai", "accepted"),
        quarantined=collector.case_of("dataset-no-content", "quarantined"),
        quickstart=collector.case_of("holdout-agent-otel", "accepted"),
        quickstart_quarantined=collector.case_of("holdout-agent-otel", "quarantined"),
    )
    # The replay extension may serve a case before the exporter's file holding it is
    # published; the readers need the files.
    want = {
        recorded.accepted["case_id"],
        recorded.quickstart["case_id"],
        recorded.quarantined["case_id"],
        recorded.quickstart_quarantined["case_id"],
    }
    collector.wait_for("the cases in the Parquet files", lambda: want <= case_ids_on_disk(collector.data))
    return recorded


def case_ids_on_disk(root: Path) -> set:
    import pyarrow.parquet as pq

    return {
        case_id
        for path in root.glob("*/dt=*/*.parquet")
        if path.parts[-3] in ("cases", "quarantine")
        for case_id in pq.read_table(path, columns=["case_id"]).column("case_id").to_pylist()
    }


@pytest.fixture(scope="session")
def reader_dir(dataset, tmp_path_factory) -> Path:
    """A directory where `reprise-data` is the recorded dataset root, as the READMEs assume."""
    path = tmp_path_factory.mktemp("reader")
    (path / "reprise-data").symlink_to(dataset.root)
    return path


@pytest.fixture(scope="session")
def spark(reader_dir):
    """A local PySpark session (Java 17), small enough for a 2-core machine. Its JVM starts in
    reader_dir, so relative paths resolve there as they do for Python."""
    from pyspark.sql import SparkSession

    cwd = os.getcwd()
    os.chdir(reader_dir)
    try:
        session = (
            SparkSession.builder.master("local[2]")
            .appName("reprise-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate()
        )
    finally:
        os.chdir(cwd)
    yield session
    session.stop()
