"""Deterministic OpenAI-compatible models on loopback.

FakeOpenAI, the twin of the one in test/node/replay.test.js, speaks Chat Completions and the
Responses API. On Chat Completions it asks for get_weather(Paris) until it sees a tool result,
then answers with that result; on Responses it asks for get_weather(Paris) and
get_weather(Lyon) as two parallel function calls until it sees their outputs, then answers
(the twin of test/node/responses.test.js). Both answer JSON or, when the request says
"stream": true, Server-Sent Events as the real API streams them.

FakeModelServer is the HTTP plumbing it shares with fake_anthropic.FakeAnthropic: it counts
the requests it gets; once closed for replay, every request is counted and answered with 500,
and the test fails on the count.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CITIES = ("Paris", "Lyon")
RESPONSES_ANSWER = "Paris and Lyon: 14 and overcast."


class FakeModelServer:
    """A model server on 127.0.0.1. Subclasses give base_path and answer(path, body, n), which
    returns (status, payload) for JSON or (200, [(event, data), ...]) for a stream."""

    base_path = "/v1"

    def __init__(self):
        self.requests = 0
        self.requests_after_close = 0
        self.accepting = True
        self.paths = []
        self.credentials = []  # the API key each accepted request carried (Authorization or x-api-key)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.base_path}"

    def close_for_replay(self):
        """From here on the model is gone: a request is counted and answered with 500."""
        self.accepting = False

    def reopen(self):
        self.accepting = True

    def shutdown(self):
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, body: dict, n: int):
        raise NotImplementedError

    def refused(self) -> tuple[int, dict]:
        return 500, {"error": {"message": "the model server was called during replay", "type": "server_error"}}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with fake._lock:
                    if not fake.accepting:
                        fake.requests_after_close += 1
                        self._send(*fake.refused())
                        return
                    fake.requests += 1
                    fake.paths.append(self.path)
                    fake.credentials.append(self.headers.get("x-api-key") or self.headers.get("Authorization"))
                    n = fake.requests
                status, payload = fake.answer(self.path, json.loads(raw), n)
                if isinstance(payload, list):
                    self._stream(payload)
                else:
                    self._send(status, payload)

            def _send(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, events: list):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event, data in events:
                    line = f"event: {event}\n" if event else ""
                    self.wfile.write(f"{line}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        return Handler


class FakeOpenAI(FakeModelServer):
    def answer(self, path: str, body: dict, n: int):
        if path == "/v1/chat/completions":
            completion = chat_completion(body, n)
            return 200, chat_chunks(completion) if body.get("stream") else completion
        if path == "/v1/responses":
            response = responses_response(body, n)
            return 200, responses_events(response) if body.get("stream") else response
        return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}


def chat_completion(body: dict, n: int) -> dict:
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


def chat_chunks(completion: dict) -> list:
    message = completion["choices"][0]["message"]
    delta = {"role": "assistant", "content": message["content"]}
    if "tool_calls" in message:
        delta["tool_calls"] = [dict(tc, index=i) for i, tc in enumerate(message["tool_calls"])]
    base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    finish = completion["choices"][0]["finish_reason"]
    chunks = [
        base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        base | {"choices": [], "usage": completion["usage"]},
    ]
    return [(None, chunk) for chunk in chunks] + [(None, "[DONE]")]


def responses_response(body: dict, n: int) -> dict:
    """The Responses API's answer to the n-th request: the two calls, or, once a
    function_call_output is the last input item, the text answer."""
    items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
    if items[-1].get("type") == "function_call_output":
        text = {"type": "output_text", "text": RESPONSES_ANSWER, "annotations": [], "logprobs": []}
        output = [{"type": "message", "id": f"msg_{n}", "status": "completed", "role": "assistant", "content": [text]}]
    else:
        output = [
            {
                "type": "function_call",
                "id": f"fc_{n}_{i}",
                "call_id": f"call_{n}_{i}",
                "name": "get_weather",
                "arguments": json.dumps({"city": city}, separators=(",", ":")),
                "status": "completed",
            }
            for i, city in enumerate(CITIES)
        ]
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 1764460800 + n,
        "status": "completed",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": "gpt-4.1-mini-2025-04-14",
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools", []),
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": {
            "input_tokens": 50 + n,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 70 + n,
        },
        "user": None,
        "metadata": {},
    }


def responses_events(response: dict) -> list:
    """The Server-Sent Events the Responses API streams for response: each typed, each with a
    sequence_number, arguments and text in several deltas, no [DONE]."""
    events = []

    def send(kind: str, **fields):
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    pending = response | {"status": "in_progress", "output": [], "usage": None}
    send("response.created", response=pending)
    send("response.in_progress", response=pending)
    for i, item in enumerate(response["output"]):
        at = {"item_id": item["id"], "output_index": i}
        if item["type"] == "function_call":
            send("response.output_item.added", output_index=i, item=item | {"status": "in_progress", "arguments": ""})
            for piece in split(item["arguments"]):
                send("response.function_call_arguments.delta", **at, delta=piece)
            send("response.function_call_arguments.done", **at, name=item["name"], arguments=item["arguments"])
        else:
            send("response.output_item.added", output_index=i, item=item | {"status": "in_progress", "content": []})
            part = item["content"][0]
            send("response.content_part.added", **at, content_index=0, part=part | {"text": ""})
            for piece in split(part["text"]):
                send("response.output_text.delta", **at, content_index=0, delta=piece, logprobs=[])
            send("response.output_text.done", **at, content_index=0, text=part["text"], logprobs=[])
            send("response.content_part.done", **at, content_index=0, part=part)
        send("response.output_item.done", output_index=i, item=item)
    send("response.completed", response=response)
    return events


def split(text: str, pieces: int = 3) -> list:
    """text in `pieces` consecutive fragments, as a model streams tokens."""
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
