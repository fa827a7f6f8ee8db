"""The reprise_pytest plugin as a user installs it: where the replay URL comes from, the per-test
session, and a clear error when the replay extension is not there."""

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from conftest import run_agent
from fake_anthropic import FakeAnthropic
from model_api_agent import CITY_SCHEMA, DESCRIPTION, INSTRUCTIONS, PROMPT
from reprise_pytest import Replay, ReplayError

pytest_plugins = ["pytester"]

USER_TEST = """
def test_urls(reprise, reprise_url):
    assert reprise_url == EXPECTED
    assert reprise.base_url("c/1") == EXPECTED + "/v1/cases/c%2F1/openai/v1"
    kwargs = reprise.openai_kwargs("abc")
    assert kwargs["base_url"] == EXPECTED + "/v1/cases/abc/openai/v1"
    assert kwargs["default_headers"]["X-Replay-Mode"] == "strict"
    assert reprise.anthropic_kwargs("abc")["base_url"] == EXPECTED + "/v1/cases/abc/anthropic"
    assert re.fullmatch(r"test_user.py-test_urls-[0-9a-f]{12}", kwargs["default_headers"]["X-Replay-Session"])
    # no request was sent: nothing for the plugin to check when the test ends
    reprise.cases_used.clear()
    reprise.sent_in.clear()
"""


@pytest.mark.parametrize(
    ("args", "env", "ini", "expected"),
    [
        ([], None, None, "http://127.0.0.1:8790"),
        ([], "http://127.0.0.1:9001", None, "http://127.0.0.1:9001"),
        ([], None, "http://127.0.0.1:9002", "http://127.0.0.1:9002"),
        (
            ["--reprise-url=http://127.0.0.1:9003"],
            "http://127.0.0.1:9001",
            "http://127.0.0.1:9002",
            "http://127.0.0.1:9003",
        ),
        ([], "http://127.0.0.1:9001", "http://127.0.0.1:9002", "http://127.0.0.1:9001"),
    ],
)
def test_replay_url_precedence(pytester, monkeypatch, args, env, ini, expected):
    """--reprise-url, then $REPRISE_URL, then the ini value, then the local default."""
    if env:
        monkeypatch.setenv("REPRISE_URL", env)
    else:
        monkeypatch.delenv("REPRISE_URL", raising=False)
    if ini:
        pytester.makeini(f"[pytest]\nreprise_url = {ini}\n")
    pytester.makepyfile(test_user=f"import re\nEXPECTED = {expected!r}\n" + USER_TEST)
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)


def test_unreachable_extension_is_a_clear_error(pytester):
    pytester.makepyfile(
        test_user="""
import pytest

from reprise_pytest import ReplayError
from reprise_pytest import ReplayError

def test_lookup(reprise):
    with pytest.raises(ReplayError, match="is the reprise collector running"):
        reprise.case_id(agent="weather-bot")

def test_agent_catches_the_connection_error(reprise):
    import openai

    try:
        openai.OpenAI(**reprise.openai_kwargs("a" * 32)).models.list()
    except openai.APIConnectionError:
        pass  # an agent that falls back when the model is unreachable
"""
    )
    result = pytester.runpytest_subprocess("--reprise-url=http://127.0.0.1:9")
    # A test whose agent caught the connection error replayed nothing: it fails, saying so.
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*whose replay URL this test used, is not served*is the reprise collector running*"])


def test_case_id_wants_exactly_one_case(collector, reprise):
    """Against the session's collector: an agent with no case is an error naming the filter."""
    with pytest.raises(ReplayError, match="0 accepted cases for agent='no-such-agent'"):
        reprise.case_id(agent="no-such-agent")


# A test that replays one call of the case leniently with another prompt, then does `then`.
LENIENT_TEST = """
import openai

CASE_ID = {case_id!r}

def test_diverges_once(reprise):
    reprise.mode = "lenient"
    client = openai.OpenAI(**reprise.openai_kwargs(CASE_ID))
    client.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": "Lyon?"}}])
    {then}
"""


def test_a_test_run_again_starts_a_fresh_session(pytester, collector, dataset):
    """The extension keeps a session's cursors and divergence log for its idle timeout, so the
    second run of the same test against the same collector must not see the first run's."""
    pytester.makepyfile(
        test_user=LENIENT_TEST.format(
            case_id=dataset.quickstart["case_id"], then="assert len(reprise.divergences()) == 1, reprise.divergences()"
        )
    )
    for _ in range(2):
        pytester.runpytest_subprocess(f"--reprise-url={collector.replay_url}").assert_outcomes(passed=1)


class FakeListing(BaseHTTPRequestHandler):
    """A replay extension's `GET /v1/cases` in pages of one case, and what each request sent."""

    pages = [
        {"cases": [{"case_id": "a" * 32, "provenance": {"service_name": "svc"}}], "next_page_token": "1"},
        {"cases": [{"case_id": "b" * 32, "provenance": {"service_name": "svc"}}]},
    ]
    seen = []
    divergences = {"divergences": []}

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        FakeListing.seen.append((self.path, self.headers.get("Authorization")))
        if url.path == "/v1/divergences":
            body = json.dumps(FakeListing.divergences).encode()
        else:
            body = json.dumps(self.pages[int(query.get("page_token", ["0"])[0])]).encode()
        send_json(self, 200, body)

    def log_message(self, *args):
        pass


def send_json(handler: BaseHTTPRequestHandler, status: int, body: bytes):
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextlib.contextmanager
def serving(handler):
    """The URL of a server on 127.0.0.1 answering with `handler`, for the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fake_listing():
    FakeListing.seen = []
    FakeListing.divergences = {"divergences": []}
    with serving(FakeListing) as url:
        yield url


def test_case_id_looks_at_every_page(fake_listing):
    """A second match on a later page of the listing makes the lookup ambiguous, not the first."""
    replay = Replay(fake_listing, "s")
    with pytest.raises(ReplayError, match="2 accepted cases for agent='bot' service='svc'"):
        replay.case_id(agent="bot", service="svc")
    assert [c["case_id"] for c in replay.all_cases(agent="bot")] == ["a" * 32, "b" * 32]


def test_case_id_names_the_cases_it_cannot_choose_between(fake_listing):
    """An ambiguous lookup lists each matching case's id and service, so the test can name one."""
    with pytest.raises(ReplayError, match=f"{'a' * 32} \\(service 'svc'\\), {'b' * 32} \\(service 'svc'\\)"):
        Replay(fake_listing, "s").case_id(agent="bot")


def test_case_id_skips_a_mutation_of_the_case(fake_listing, monkeypatch):
    """A case `reprise mutate` made keeps the recorded run's agent: the listing marks it with
    `mutation_of`, and the lookup of the agent's case still finds the one recorded run."""
    monkeypatch.setattr(
        FakeListing,
        "pages",
        [
            {"cases": [{"case_id": "a" * 32, "provenance": {"service_name": "svc"}}], "next_page_token": "1"},
            {"cases": [{"case_id": "b" * 32, "provenance": {"service_name": "svc"}, "mutation_of": "a" * 32}]},
        ],
    )
    replay = Replay(fake_listing, "s")
    assert replay.case_id(agent="bot", service="svc") == "a" * 32
    assert [c["case_id"] for c in replay.all_cases(agent="bot")] == ["a" * 32, "b" * 32], "the listing shows both"


def test_a_divergence_past_a_full_log_fails_the_test(fake_listing):
    """A session's log keeps its first 1,000 divergences and counts the rest in `total`: one that
    comes after the test read a full log is unread, though the list did not grow."""
    refused = {"endpoint": "chat", "case_id": "a" * 32, "refused": True, "paths": [], "findings": []}
    FakeListing.divergences = {"divergences": [refused] * 1000, "total": 1000}
    replay = Replay(fake_listing, "s")
    replay.sent_in.add("s")
    assert len(replay.divergences()) == 1000
    replay.check()  # every divergence was read
    FakeListing.divergences = {"divergences": [refused] * 1000, "total": 1002}
    with pytest.raises(
        ReplayError, match=r"(?s)2 request\(s\) of this test left the recording.*2 more past the first 1000"
    ):
        replay.check()


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--reprise-token=from-option"], "from-env", "from-option"),
        ([], "from-env", "from-env"),
        ([], None, None),
    ],
)
def test_the_token_reaches_the_extension(pytester, fake_listing, monkeypatch, args, env, expected):
    """--reprise-token (else REPRISE_TOKEN) is sent as a bearer token on the plugin's own requests
    and is the openai SDK's API key and the anthropic SDK's auth_token, which the SDKs send the
    same way."""
    if env:
        monkeypatch.setenv("REPRISE_TOKEN", env)
    else:
        monkeypatch.delenv("REPRISE_TOKEN", raising=False)
    pytester.makepyfile(
        test_user=f"""
def test_token(reprise):
    assert reprise.cases(agent="bot")
    assert reprise.openai_kwargs("x")["api_key"] == {expected or "not-needed"!r}
    import anthropic
    client = anthropic.Anthropic(**reprise.anthropic_kwargs("x"))
    assert client.auth_headers == {{"Authorization": {f"Bearer {expected or 'not-needed'}"!r}}}
"""
    )
    pytester.runpytest_subprocess(f"--reprise-url={fake_listing}", *args).assert_outcomes(passed=1)
    want = f"Bearer {expected}" if expected else None
    assert FakeListing.seen and all(auth == want for _, auth in FakeListing.seen), FakeListing.seen
    assert any(path.startswith("/v1/divergences") for path, _ in FakeListing.seen), "the session was checked"


SWALLOWED_MISS_TEST = """
import openai

CASE_ID = {case_id!r}

def test_agent_falls_back(reprise):
    client = openai.OpenAI(**reprise.openai_kwargs(CASE_ID))
    try:
        client.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": "Lyon?"}}])
    except openai.NotFoundError:
        pass  # the agent under test catches the error and answers from a canned reply
"""


def test_a_refusal_the_agent_swallowed_fails_the_test(pytester, collector, dataset):
    """A request strict replay refused fails the test even when the agent caught the 404 and
    carried on: the test would otherwise pass on a run the recording never had."""
    pytester.makepyfile(test_user=SWALLOWED_MISS_TEST.format(case_id=dataset.quickstart["case_id"]))
    result = pytester.runpytest_subprocess(f"--reprise-url={collector.replay_url}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*1 request(s) of this test left the recording*",
            "*chat request to case*refused at*messages*(model_config_changed, prompt_changed)",
        ]
    )


def test_a_case_id_the_server_does_not_hold_fails_the_test(pytester, collector, dataset):
    """A case id the replay server does not hold (a typo, a prefix, a server reading another
    dataset) fails the test: every request of it was a 404 that the agent may have caught."""
    prefix = dataset.quickstart["case_id"][:8]
    pytester.makepyfile(test_user=SWALLOWED_MISS_TEST.format(case_id=prefix))
    result = pytester.runpytest_subprocess(f"--reprise-url={collector.replay_url}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*case '{prefix}', whose replay URL this test used, is not served*404*"])


def test_a_lenient_divergence_the_test_did_not_read_fails_it(pytester, collector, dataset):
    """Lenient replay serves a recording that differs from the request; a test that never reads
    reprise.divergences() would pass on a run the recording does not show."""
    pytester.makepyfile(
        test_user=LENIENT_TEST.format(case_id=dataset.quickstart["case_id"], then="pass  # never reads the divergences")
    )
    result = pytester.runpytest_subprocess(f"--reprise-url={collector.replay_url}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*1 request(s) of this test left the recording*", "*served another recording at*messages*"]
    )


def test_a_divergence_after_the_test_read_the_log_fails_it(pytester, collector, dataset):
    """Reading the divergences judges those read, not those that come after."""
    then = (
        "assert len(reprise.divergences()) == 1\n"
        "    client.chat.completions.create(model='gpt-4o-mini', messages=[{'role': 'user', 'content': 'Lyon?'}])"
    )
    pytester.makepyfile(test_user=LENIENT_TEST.format(case_id=dataset.quickstart["case_id"], then=then))
    result = pytester.runpytest_subprocess(f"--reprise-url={collector.replay_url}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*1 request(s) of this test left the recording*", "*chat request*served another recording*"]
    )


# Replays the first call of a recorded Anthropic Messages run through the anthropic SDK, then
# makes it with another system prompt and catches the refusal, as an agent with a fallback would.
ANTHROPIC_TEST = """
import anthropic

CASE_ID = {case_id!r}
REQUEST = {request!r}

def test_replays_the_recorded_message(reprise):
    client = anthropic.Anthropic(**reprise.anthropic_kwargs(CASE_ID))
    message = client.messages.create(**REQUEST)
    assert [(b.id, b.input) for b in message.content if b.type == "tool_use"] == {uses!r}

def test_a_changed_system_prompt_the_agent_swallowed(reprise):
    client = anthropic.Anthropic(**reprise.anthropic_kwargs(CASE_ID))
    try:
        client.messages.create(**{{**REQUEST, "system": "You are a terse weather assistant."}})
    except anthropic.NotFoundError:
        pass
"""


def test_anthropic_kwargs_replay_a_recorded_messages_run(pytester, collector):
    """anthropic_kwargs gives the anthropic SDK the base URL of one recorded case and the test's
    own replay session: the recorded tool_use blocks come back with their ids, without a model
    call, and a refusal the agent caught fails the test as with openai_kwargs."""
    model = FakeAnthropic()
    try:
        service = "py-plugin-anthropic"
        recorded = run_agent(
            {
                "AGENT": "anthropic",
                "INSTRUMENTATION": "openinference-anthropic",
                "OTLP_ENDPOINT": collector.otlp,
                "SERVICE_NAME": service,
                "ANTHROPIC_BASE_URL": model.url,
            },
            "model_api_agent.py",
        )
        assert recorded.get("error") is None, recorded
        model.close_for_replay()
        case_id = collector.case_of(service, "accepted")["case_id"]
        request = {
            "model": "claude-haiku-4-5",
            "max_tokens": 256,
            "system": INSTRUCTIONS,
            "tools": [{"name": "get_weather", "description": DESCRIPTION, "input_schema": CITY_SCHEMA}],
            "messages": [{"role": "user", "content": PROMPT}],
        }
        uses = [(c["callId"], json.loads(c["arguments"])) for c in recorded["toolCalls"]]
        pytester.makepyfile(test_user=ANTHROPIC_TEST.format(case_id=case_id, request=request, uses=uses))
        result = pytester.runpytest_subprocess(f"--reprise-url={collector.replay_url}")
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines(
            ["*test_a_changed_system_prompt_the_agent_swallowed*", "*1 request(s) of this test left the recording*"]
        )
        assert model.requests_after_close == 0, "the replay called the model"
    finally:
        model.shutdown()


class RefusingAuth(BaseHTTPRequestHandler):
    """A replay extension behind bearertokenauth that refuses every request's credentials."""

    def do_GET(self):
        send_json(self, 401, b'{"error":{"message":"the replay server\'s auth refused the request\'s credentials"}}')

    def log_message(self, *args):
        pass


@pytest.mark.parametrize(
    ("token", "hint"),
    [
        (None, "pass its token with --reprise-token or REPRISE_TOKEN"),
        ("wrong", "refused the token from --reprise-token or REPRISE_TOKEN"),
    ],
)
def test_a_refused_credential_names_the_token_option(token, hint):
    """A 401 from an extension behind an authenticator says where the plugin's token comes from:
    the server's own words do not name the plugin's option."""
    with serving(RefusingAuth) as url, pytest.raises(ReplayError, match=hint):
        Replay(url, "s", token=token).cases()
