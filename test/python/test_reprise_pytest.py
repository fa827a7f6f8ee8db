"""The reprise_pytest plugin as a user installs it: where the replay URL comes from, the per-test
session, and a clear error when the replay extension is not there."""

import pytest

from reprise_pytest import ReplayError

pytest_plugins = ["pytester"]

USER_TEST = """
def test_urls(reprise, reprise_url):
    assert reprise_url == EXPECTED
    assert reprise.base_url("c/1") == EXPECTED + "/v1/cases/c%2F1/openai/v1"
    kwargs = reprise.openai_kwargs("abc")
    assert kwargs["base_url"] == EXPECTED + "/v1/cases/abc/openai/v1"
    assert kwargs["default_headers"] == {
        "X-Replay-Session": "test_user.py-test_urls",
        "X-Replay-Mode": "strict",
    }
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
    pytester.makepyfile(test_user=f"EXPECTED = {expected!r}\n" + USER_TEST)
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
"""
    )
    pytester.runpytest_subprocess("--reprise-url=http://127.0.0.1:9").assert_outcomes(passed=1)


def test_case_id_wants_exactly_one_case(collector, reprise):
    """Against the session's collector: an agent with no case is an error naming the filter."""
    with pytest.raises(ReplayError, match="0 accepted cases for agent='no-such-agent'"):
        reprise.case_id(agent="no-such-agent")
