"""Records one run of model_api_agent.py as OTLP/JSON, for the normalizer's Go tests.

    .venv/bin/python capture_otlp.py OUT_DIR AGENT=anthropic INSTRUMENTATION=openinference-anthropic [STREAM=1 ...]

The agent runs against the fake model servers (fake_openai.py, fake_anthropic.py) with its
OTLP/HTTP exporter pointed at a sink here, which writes what it received to OUT_DIR/traces.json
in the OTLP/JSON encoding (hex trace and span ids), one resourceSpans entry per export request.
"""

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from fake_anthropic import FakeAnthropic
from fake_openai import FakeOpenAI

HERE = Path(__file__).parent
IDS = ("traceId", "spanId", "parentSpanId")


def hex_ids(value):
    """OTLP/JSON writes ids as hex; protobuf's JSON mapping writes bytes as base64."""
    if isinstance(value, dict):
        return {k: base64.b64decode(v).hex() if k in IDS else hex_ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [hex_ids(v) for v in value]
    return value


def main():
    out_dir, settings = Path(sys.argv[1]), dict(arg.split("=", 1) for arg in sys.argv[2:])
    received = []

    class Sink(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.path == "/v1/traces":
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                received.append(hex_ids(MessageToDict(request)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    openai, anthropic = FakeOpenAI(), FakeAnthropic()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "ANTHROPIC_"))}
    env |= {
        "OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_address[1]}",
        "OPENAI_BASE_URL": openai.url,
        "ANTHROPIC_BASE_URL": anthropic.url,
        "SERVICE_NAME": out_dir.name,
    } | settings
    done = subprocess.run([sys.executable, str(HERE / "model_api_agent.py")], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"agent failed:\n{done.stderr}")
    out_dir.mkdir(parents=True, exist_ok=True)
    spans = [rs for request in received for rs in request.get("resourceSpans", [])]
    (out_dir / "traces.json").write_text(json.dumps({"resourceSpans": spans}, indent=1) + "\n")
    print(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
