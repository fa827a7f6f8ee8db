"""A deterministic Anthropic Messages API on loopback, the twin of the one in
test/node/anthropic.test.js: it asks for get_weather(Paris) and get_weather(Lyon) as two
parallel tool_use blocks until the last user turn carries their tool_result blocks, then
answers. JSON, or, when the request says "stream": true, the Server-Sent Events Anthropic
streams (message_start, content_block_start / ping / content_block_delta with text_delta and
input_json_delta fragments / content_block_stop, message_delta with stop_reason and usage,
message_stop). The SDK's base URL is the server's root (it adds /v1 itself)."""

import json

from fake_openai import CITIES, FakeModelServer, split

ANSWER = "Paris and Lyon: 14 and overcast."


class FakeAnthropic(FakeModelServer):
    base_path = ""

    def refused(self) -> tuple[int, dict]:
        return 500, {
            "type": "error",
            "error": {"type": "api_error", "message": "the model server was called during replay"},
        }

    def answer(self, path: str, body: dict, n: int):
        if path != "/v1/messages":
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}}
        message = messages_response(body, n)
        return 200, messages_events(message) if body.get("stream") else message


def messages_response(body: dict, n: int) -> dict:
    last = body["messages"][-1]
    blocks = last["content"] if isinstance(last["content"], list) else []
    if any(b.get("type") == "tool_result" for b in blocks):
        content, stop = [{"type": "text", "text": ANSWER}], "end_turn"
    else:
        content = [
            {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": "get_weather", "input": {"city": city}}
            for i, city in enumerate(CITIES)
        ]
        stop = "tool_use"
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 40 + n,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 15,
            "service_tier": "standard",
        },
    }


def messages_events(message: dict) -> list:
    usage = message["usage"]
    start = message | {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage | {"output_tokens": 1}}
    events = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            empty, deltas = (
                block | {"input": {}},
                [
                    {"type": "input_json_delta", "partial_json": piece}
                    for piece in [""] + split(json.dumps(block["input"], separators=(",", ":")))
                ],
            )
        else:
            empty, deltas = (
                block | {"text": ""},
                [{"type": "text_delta", "text": piece} for piece in split(block["text"])],
            )
        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": empty}))
        if i == 0:
            events.append(("ping", {"type": "ping"}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(
        ("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}})
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events
