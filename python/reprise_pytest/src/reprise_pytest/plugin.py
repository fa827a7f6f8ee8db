"""The pytest plugin: the `reprise_url` and `reprise` fixtures and the `--reprise-url` option.

A test asks `reprise` for a case (by id, or by agent and service) and gets the base URL that
replays it through the `replay` extension's OpenAI-compatible endpoint, plus the headers that
give the test its own replay session."""

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

DEFAULT_URL = "http://127.0.0.1:8790"


class ReplayError(AssertionError):
    """The replay extension did not answer, or no single case matched."""


class Replay:
    """A client of one replay extension, scoped to one test (its replay session)."""

    def __init__(self, url: str, session: str, mode: str = "strict"):
        self.url = url.rstrip("/")
        self.session = session
        self.mode = mode

    def base_url(self, case_id: str) -> str:
        """The OpenAI base URL that replays only `case_id` (give it to the SDK as `base_url`)."""
        return f"{self.url}/v1/cases/{urllib.parse.quote(case_id, safe='')}/openai/v1"

    @property
    def headers(self) -> dict:
        """The headers that keep this test's calls in its own replay session, in its mode."""
        return {"X-Replay-Session": self.session, "X-Replay-Mode": self.mode}

    def openai_kwargs(self, case_id: str) -> dict:
        """Keyword arguments for `openai.OpenAI(...)` / `AsyncOpenAI(...)` replaying `case_id`."""
        return {
            "base_url": self.base_url(case_id),
            "api_key": "not-needed",
            "default_headers": self.headers,
            "max_retries": 0,
        }

    def cases(self, **filters) -> list:
        """Case summaries from `GET /v1/cases` (filters: status, agent, since, until, limit)."""
        query = urllib.parse.urlencode({k: v for k, v in filters.items() if v is not None})
        return self._get(f"/v1/cases?{query}")["cases"]

    def case_id(self, *, agent: str | None = None, service: str | None = None, status: str = "accepted") -> str:
        """The id of the one case of `agent` (and `service`, matched on provenance.service_name)."""
        found = [
            c
            for c in self.cases(agent=agent, status=status, limit=1000)
            if service is None or c["provenance"]["service_name"] == service
        ]
        if len(found) != 1:
            raise ReplayError(f"{len(found)} {status} cases for agent={agent!r} service={service!r}, want exactly one")
        return found[0]["case_id"]

    def case(self, case_id: str) -> dict:
        """The whole case (`GET /v1/cases/{case_id}`)."""
        return self._get(f"/v1/cases/{urllib.parse.quote(case_id, safe='')}")

    def divergences(self) -> list:
        """What differed from the recording in this test's session (lenient mode)."""
        return self._get(f"/v1/divergences?session={urllib.parse.quote(self.session)}")["divergences"]

    def _get(self, path: str):
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as res:
                return json.load(res)
        except urllib.error.HTTPError as err:
            raise ReplayError(f"GET {path}: {err.code} {err.read().decode(errors='replace')}") from None
        except OSError as err:
            raise ReplayError(
                f"GET {self.url}{path}: {err} (is the reprise collector running with the replay extension?)"
            ) from None


def pytest_addoption(parser):
    parser.addoption(
        "--reprise-url", default=None, help=f"replay extension URL (env REPRISE_URL, default {DEFAULT_URL})"
    )
    parser.addini("reprise_url", default=None, help="replay extension URL")


@pytest.fixture(scope="session")
def reprise_url(pytestconfig) -> str:
    """The replay extension's URL: --reprise-url, else REPRISE_URL, else the ini value, else the
    local default. Override this fixture to point at a collector your own fixture starts."""
    return (
        pytestconfig.getoption("reprise_url")
        or os.environ.get("REPRISE_URL")
        or pytestconfig.getini("reprise_url")
        or DEFAULT_URL
    )


@pytest.fixture
def reprise(request, reprise_url) -> Replay:
    """A `Replay` for this test, in a replay session named after the test (strict mode;
    `reprise.mode = "lenient"` to serve the recorded calls in order despite differences)."""
    session = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.nodeid).strip("-")
    return Replay(reprise_url, session)
