"""A deterministic OpenAI-compatible model on loopback, the twin of the one in
test/node/replay.test.js: it asks for get_weather(Paris) until it sees a tool result, then
answers with that result. It counts the requests it gets; once closed for replay, every request
is an error the test fails on."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self):
        self.requests = 0
        self.requests_after_close = 0
        self.accepting = True
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close_for_replay(self):
        """From here on the model is gone: a request is counted and answered with 500."""
        self.accepting = False

    def shutdown(self):
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, body: dict) -> dict:
        with self._lock:
            self.requests += 1
            n = self.requests
        last = body["messages"][-1]
        if last["role"] == "tool":
            message = {"role": "assistant", "content": f"Answer: based on {last['content']} it is mild in Paris."}
        else:
            call = {
                "id": f"call_{n}_0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris","unit":"celsius"}'},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1764460800 + n,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 70 + n, "completion_tokens": 17, "total_tokens": 87 + n},
        }

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if not fake.accepting:
                    with fake._lock:
                        fake.requests_after_close += 1
                    self._send(
                        500, {"error": {"message": "the model server was called during replay", "type": "server_error"}}
                    )
                    return
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                    return
                body = json.loads(raw)
                completion = fake._answer(body)
                if body.get("stream"):
                    self._stream(completion)
                else:
                    self._send(200, completion)

            def _send(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, completion: dict):
                message = completion["choices"][0]["message"]
                delta = {"role": "assistant", "content": message["content"]}
                if "tool_calls" in message:
                    delta["tool_calls"] = [dict(tc, index=i) for i, tc in enumerate(message["tool_calls"])]
                base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
                chunks = [
                    base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    base
                    | {
                        "choices": [
                            {"index": 0, "delta": {}, "finish_reason": completion["choices"][0]["finish_reason"]}
                        ]
                    },
                    base | {"choices": [], "usage": completion["usage"]},
                ]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        return Handler
