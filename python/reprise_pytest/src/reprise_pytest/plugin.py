"""The pytest plugin: the `reprise_url` and `reprise` fixtures and the `--reprise-url` option.

A test asks `reprise` for a case (by id, or by agent and service) and gets the base URL that
replays it through the `replay` extension's OpenAI-compatible or Anthropic Messages endpoint,
plus the headers that give the test its own replay session."""

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest

DEFAULT_URL = "http://127.0.0.1:8790"

# The `reprise` fixture's Replay, kept on the test item for the check after the test.
REPLAY_KEY = pytest.StashKey()


class ReplayError(AssertionError):
    """The replay extension did not answer, or no single case matched."""


class Replay:
    """A client of one replay extension, scoped to one test (its replay session)."""

    def __init__(self, url: str, session: str, mode: str = "strict", token: str | None = None):
        self.url = url.rstrip("/")
        self.session = session
        self.mode = mode
        self.token = token
        # What check() looks at when the test ends: the cases whose replay URL the test used,
        # the sessions its headers named, and how many entries of each session's divergence log
        # the test read (the log only grows).
        self.cases_used = set()
        self.sent_in = set()
        self.read = {}

    def base_url(self, case_id: str) -> str:
        """The OpenAI base URL that replays only `case_id` (give it to the SDK as `base_url`)."""
        self.cases_used.add(case_id)
        return f"{self.url}/v1/cases/{urllib.parse.quote(case_id, safe='')}/openai/v1"

    @property
    def headers(self) -> dict:
        """The headers that keep this test's calls in its own replay session, in its mode."""
        self.sent_in.add(self.session)
        return {"X-Replay-Session": self.session, "X-Replay-Mode": self.mode}

    def openai_kwargs(self, case_id: str) -> dict:
        """Keyword arguments for `openai.OpenAI(...)` / `AsyncOpenAI(...)` replaying `case_id`."""
        return {
            "base_url": self.base_url(case_id),
            # The SDK sends its key as `Authorization: Bearer <key>`, which is what a replay
            # extension behind `bearertokenauth` checks; without a token any key will do.
            "api_key": self.token or "not-needed",
            "default_headers": self.headers,
            "max_retries": 0,
        }

    def anthropic_base_url(self, case_id: str) -> str:
        """The Anthropic base URL that replays only `case_id` (the SDK adds `/v1/messages`)."""
        self.cases_used.add(case_id)
        return f"{self.url}/v1/cases/{urllib.parse.quote(case_id, safe='')}/anthropic"

    def anthropic_kwargs(self, case_id: str) -> dict:
        """Keyword arguments for `anthropic.Anthropic(...)` / `AsyncAnthropic(...)` replaying
        `case_id`."""
        # A token goes as `auth_token`, which every version of the SDK sends as `Authorization:
        # Bearer`, what a replay extension behind `bearertokenauth` reads (SDKs before 2.x send
        # `api_key` as `x-api-key`). Without one, a placeholder key: any explicit credential keeps
        # the SDK from taking ANTHROPIC_API_KEY from the environment and sending a real key to the
        # replay server. The SDK refuses both at once.
        credential = {"auth_token": self.token} if self.token else {"api_key": "not-needed"}
        return {
            "base_url": self.anthropic_base_url(case_id),
            **credential,
            "default_headers": self.headers,
            "max_retries": 0,
        }

    def cases(self, **filters) -> list:
        """One page of case summaries from `GET /v1/cases` (filters: status, agent, since, until,
        limit, page_token); `all_cases` reads every page."""
        return self._page(filters)["cases"]

    def all_cases(self, **filters) -> list:
        """Every case summary the filters select, following `next_page_token` page by page."""
        filters = {"limit": 1000, **filters}
        found = []
        while True:
            page = self._page(filters)
            found += page["cases"]
            if not page.get("next_page_token"):
                return found
            filters["page_token"] = page["next_page_token"]

    def case_id(self, *, agent: str | None = None, service: str | None = None, status: str = "accepted") -> str:
        """The id of the one recorded run of `agent` (and `service`, matched on
        provenance.service_name), looked for in every page of the listing: a second match on a
        later page is an error too. A case `reprise mutate` made (its summary has `mutation_of`)
        is not a recorded run and is skipped: name it by the id `reprise mutate` printed."""
        found = [
            c
            for c in self.all_cases(agent=agent, status=status)
            if (service is None or c["provenance"]["service_name"] == service) and not c.get("mutation_of")
        ]
        if len(found) != 1:
            # Naming the candidates (the first ten) lets the test pick one by service or by id.
            named = ", ".join(f"{c['case_id']} (service {c['provenance']['service_name']!r})" for c in found[:10])
            more = f" and {len(found) - 10} more" if len(found) > 10 else ""
            raise ReplayError(
                f"{len(found)} {status} cases for agent={agent!r} service={service!r}, want exactly one"
                + (f": {named}{more}; pass service= or the case id" if found else "")
            )
        return found[0]["case_id"]

    def case(self, case_id: str) -> dict:
        """The whole case (`GET /v1/cases/{case_id}`)."""
        return self._get(f"/v1/cases/{urllib.parse.quote(case_id, safe='')}")

    def divergences(self) -> list:
        """What differed from the recording in this test's session: lenient answers, and the
        requests replay refused (`refused: true`). A test that reads them judges them itself."""
        log = self._log(self.session)
        self.read[self.session] = logged(log)
        return log["divergences"]

    def check(self):
        """Fails (ReplayError) a test that passed on a run replay could not answer as recorded: an
        agent that catches the 404 and carries on (a fallback answer, a retry without the change),
        or a lenient or hybrid run nobody looked at, would otherwise pass on a run the recording
        never had. Checked: every case whose replay URL the test used is served (a typo'd id or a
        prefix, or a server reading another dataset, is a 404 for every request), and the
        divergence log of each session the test's headers named holds nothing the test did not
        read itself (divergences())."""
        for case_id in sorted(self.cases_used):
            try:
                self.case(case_id)
            except ReplayError as err:
                raise ReplayError(f"case {case_id!r}, whose replay URL this test used, is not served: {err}") from None
        unread, not_kept = [], 0
        for s in sorted(self.sent_in):
            log = self._log(s)
            read = self.read.get(s, 0)
            unread += log["divergences"][read:]
            not_kept += logged(log) - max(read, len(log["divergences"]))
        if unread or not_kept:
            raise ReplayError(
                f"{len(unread) + not_kept} request(s) of this test left the recording, and the test passed anyway "
                "(the agent caught a refusal, or no one read the divergences):\n"
                + "".join(f"  {divergence_text(d)}\n" for d in unread)
                + (
                    f"  and {not_kept} more past the first 1000 of a session, which the server counts, not keeps\n"
                    if not_kept
                    else ""
                )
                + "read reprise.divergences() in the test to judge the divergences it expects"
            )

    def _auth_hint(self, status: int) -> str:
        """Where the token comes from, after a 401: the server's words do not name the option."""
        if status != 401:
            return ""
        if self.token:
            return " (the replay extension refused the token from --reprise-token or REPRISE_TOKEN)"
        return " (the replay extension has an auth: pass its token with --reprise-token or REPRISE_TOKEN)"

    def _log(self, session: str) -> dict:
        return self._get(f"/v1/divergences?session={urllib.parse.quote(session)}")

    def _page(self, filters: dict) -> dict:
        query = urllib.parse.urlencode({k: v for k, v in filters.items() if v is not None})
        return self._get(f"/v1/cases?{query}")

    def _get(self, path: str):
        try:
            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            with urllib.request.urlopen(urllib.request.Request(self.url + path, headers=headers), timeout=10) as res:
                return json.load(res)
        except urllib.error.HTTPError as err:
            raise ReplayError(
                f"GET {path}: {err.code} {err.read().decode(errors='replace')}" + self._auth_hint(err.code)
            ) from None
        except OSError as err:
            raise ReplayError(
                f"GET {self.url}{path}: {err} (is the reprise collector running with the replay extension?)"
            ) from None


def logged(log: dict) -> int:
    """How many divergences a session logged: the server keeps the first 1,000 and counts them
    all in `total` (a server without `total` kept them all)."""
    return log.get("total", len(log["divergences"]))


def divergence_text(d: dict) -> str:
    """A divergence as the log gives it: what replay did, and where the request left the
    recording (paths and finding types, never values; a request made more often than recorded
    has no path)."""
    did = "refused" if d.get("refused") else "answered live" if d.get("live") else "served another recording"
    where = f" at {', '.join(d['paths'])}" if d.get("paths") else ""
    types = ", ".join(dict.fromkeys(f["type"] for f in d.get("findings") or []))
    return f"{d['endpoint']} request to case {d['case_id']} {did}{where} ({types})"


def pytest_addoption(parser):
    parser.addoption(
        "--reprise-url", default=None, help=f"replay extension URL (env REPRISE_URL, default {DEFAULT_URL})"
    )
    parser.addini("reprise_url", default=None, help="replay extension URL")
    parser.addoption(
        "--reprise-token",
        default=None,
        help="bearer token of a replay extension behind bearertokenauth (env REPRISE_TOKEN)",
    )


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


@pytest.fixture(scope="session")
def reprise_token(pytestconfig) -> str | None:
    """The bearer token for a replay extension behind `bearertokenauth`: --reprise-token, else
    REPRISE_TOKEN, else none. Kept out of the ini file, which is usually committed."""
    return pytestconfig.getoption("reprise_token") or os.environ.get("REPRISE_TOKEN") or None


@pytest.fixture
def reprise(request, reprise_url, reprise_token) -> Replay:
    """A `Replay` for this test, in a replay session of its own (strict mode;
    `reprise.mode = "lenient"` to serve the recorded calls in order despite differences).

    The session is the test's node id plus a random suffix: the extension keeps a session's
    cursors and divergence log for `sessions.idle_timeout`, so a test run again against the same
    collector (or two node ids that read alike) must not continue an earlier session."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.nodeid).strip("-")
    replay = Replay(reprise_url, f"{name}-{uuid.uuid4().hex[:12]}", token=reprise_token)
    request.node.stash[REPLAY_KEY] = replay
    return replay


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test that passed fails when replay could not answer its requests (Replay.check).
    A test that failed already is left as it is: yield raises its error."""
    result = yield
    replay = item.stash.get(REPLAY_KEY, None)
    if replay is not None:
        replay.check()
    return result
