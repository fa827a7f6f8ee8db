# Replays each recorded model call of a case through the official Python SDKs, as JSON and as
# a stream (the SDKs' own stream helpers), and prints what the agent would see, one JSON line
# per call: the Go test (TestStreamsReadByTheSDKs) compares the stream with the JSON answer.
# argv: the case's base URL, then the request bodies (JSON files) of each API.
import json, sys

import anthropic
import openai

base, files = sys.argv[1], sys.argv[2:]
oa = openai.OpenAI(base_url=base + "/openai/v1", api_key="x", max_retries=0)
an = anthropic.Anthropic(base_url=base + "/anthropic", api_key="x", max_retries=0)


def chat(body):
    body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    full = oa.chat.completions.create(**body).choices[0].message
    chunks = list(oa.chat.completions.create(**body, stream=True, stream_options={"include_usage": True}))
    with oa.chat.completions.stream(**body) as s:
        for _ in s:
            pass
        final = s.get_final_completion()
    m = final.choices[0].message
    return {
        "json": {"content": full.content, "tool_calls": [[c.id, c.function.name, c.function.arguments] for c in full.tool_calls or []]},
        "stream": {"content": m.content, "tool_calls": [[c.id, c.function.name, c.function.arguments] for c in m.tool_calls or []]},
        "finish": [final.choices[0].finish_reason, chunks[-2].choices[0].finish_reason if chunks[-2].choices else None],
        "usage": chunks[-1].usage.total_tokens if chunks[-1].usage else None,
        "id": [final.id, chunks[0].id],
    }


def responses(body):
    body = {k: v for k, v in body.items() if k != "stream"}
    full = oa.responses.create(**body)
    with oa.responses.stream(**body) as s:
        types = [e.type for e in s]
        final = s.get_final_response()
    def items(r):
        return [[o.type, getattr(o, "call_id", None), getattr(o, "arguments", None)] for o in r.output]
    return {
        "json": {"text": full.output_text, "items": items(full)},
        "stream": {"text": final.output_text, "items": items(final)},
        "last": types[-1], "usage": final.usage.total_tokens, "id": [full.id, final.id],
    }


def messages(body):
    # The SDK's typed parameters are the required ones; the rest (sampling, tools) go as sent.
    rest = {k: v for k, v in body.items() if k not in ("stream", "model", "max_tokens", "messages")}
    body = {"model": body["model"], "max_tokens": body["max_tokens"], "messages": body["messages"], "extra_body": rest}
    full = an.messages.create(**body)
    with an.messages.stream(**body) as s:
        types = [e.type for e in s]
        final = s.get_final_message()
    def blocks(m):
        return [[b.type, getattr(b, "text", None), getattr(b, "id", None), getattr(b, "input", None)] for b in m.content]
    return {
        "json": {"blocks": blocks(full), "stop": full.stop_reason},
        "stream": {"blocks": blocks(final), "stop": final.stop_reason},
        "last": types[-1], "usage": final.usage.output_tokens, "id": [full.id, final.id],
    }


for f in files:
    api = f.rsplit("/", 1)[-1].split("-")[0]
    print(json.dumps({"api": api, **{"chat": chat, "responses": responses, "anthropic": messages}[api](json.load(open(f)))}))
