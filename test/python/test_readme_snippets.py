"""Every reader snippet in the READMEs runs against a dataset this session just recorded, as a
reader would paste it: in a directory where `reprise-data` is the dataset root. The SQL is the
README's text, run by DuckDB; the Python blocks are executed as they are written (the Spark one
with a `spark` session, which it assumes)."""

import contextlib
import io
import re
import textwrap

import duckdb
import pytest

from conftest import REPO
from test_record_replay import ANSWER, ARGUMENTS, PROMPT

EXPORTER_README = REPO / "exporter" / "replayparquetexporter" / "README.md"
TOP_README = REPO / "README.md"


def code_blocks(path, language: str) -> list[str]:
    """The fenced blocks of `language` in a Markdown file (indented fences included)."""
    blocks = re.findall(r"^[ \t]*```" + language + r"[ \t]*\n(.*?)^[ \t]*```", path.read_text(), re.S | re.M)
    return [textwrap.dedent(b) for b in blocks]


def sql_statements(block: str) -> list[str]:
    """The statements of a SQL block (none of the READMEs' statements has a ; inside a string)."""
    without_comments = re.sub(r"--[^\n]*", "", block)
    return [s.strip() for s in without_comments.split(";") if s.strip()]


@pytest.fixture
def in_reader_dir(dataset, reader_dir, monkeypatch):
    monkeypatch.chdir(reader_dir)
    return dataset


def run_sql(block: str) -> list[list[dict]]:
    results = []
    for statement in sql_statements(block):
        relation = duckdb.sql(statement)
        rows = relation.fetchall()
        results.append([dict(zip(relation.columns, row, strict=True)) for row in rows])
    return results


def test_top_readme_duckdb_quickstart(in_reader_dir):
    """The quick start's two queries show what the README says they show: the weather-bot run's
    question, answer, tool arguments and 214 tokens; the run without content quarantined with
    no_input_messages and no_model_output."""
    (block,) = code_blocks(TOP_README, "sql")
    cases_sql, quarantine_sql = sql_statements(block)
    (cases,) = run_sql(cases_sql)
    assert {"question": PROMPT, "tool_args": ARGUMENTS, "total_tokens": 214} in [
        {k: r[k] for k in ("question", "tool_args", "total_tokens")} for r in cases
    ], cases
    quickstart = next(r for r in cases if r["total_tokens"] == 214)
    assert quickstart["answer"].startswith("Answer #2: based on ") and quickstart["answer"].endswith(
        "it is mild in Paris."
    )
    # The Python agent's run is there too, read by the same query.
    assert {"question": PROMPT, "answer": ANSWER, "tool_args": ARGUMENTS, "total_tokens": 177} in [
        {k: r[k] for k in ("question", "answer", "tool_args", "total_tokens")} for r in cases
    ]

    (quarantine,) = run_sql(quarantine_sql)
    services = {r["service_name"]: r["reasons"] for r in quarantine}
    for service in ("holdout-agent-otel", "dataset-no-content"):
        assert set(services[service]) == {"no_input_messages", "no_model_output"}, quarantine


def test_exporter_readme_duckdb(in_reader_dir):
    steps_block, overview_block, dedupe_block, steps_dedupe_block = code_blocks(EXPORTER_README, "sql")
    (steps,) = run_sql(steps_block)
    # steps/ leaves the ids to cases/; the join gets every step of the accepted case its ids
    mine = [r for r in steps if r["case_id"] == in_reader_dir.accepted["case_id"]]
    assert sorted(r["kind"] for r in mine if r["kind"] != "agent") == ["llm", "llm", "tool"], mine
    assert all(r["trace_id"] and r["span_id"] for r in mine), mine
    overview, tool_calls, costs, reasons = run_sql(overview_block)
    assert {r["case_id"] for r in overview} >= {in_reader_dir.accepted["case_id"], in_reader_dir.quickstart["case_id"]}
    assert all(r["status"] == "accepted" for r in overview)
    assert any(r["answer"] == ANSWER and r["tools"] == 1 and r["total_tokens"] == 177 for r in overview), overview
    assert any(r["name"] == "get_weather" and r["arguments"] == ARGUMENTS for r in tool_calls), tool_calls
    # the weather agent calls gpt-4o-mini through openai: priced by the built-in genai-prices table
    assert any(r["model_id"] == "gpt-4o-mini" and r["status"] == "computed" and r["usd"] > 0 for r in costs), costs
    codes = {r["code"]: r["cases"] for r in reasons}
    assert codes.get("no_input_messages", 0) >= 2 and codes.get("no_model_output", 0) >= 2, codes
    (deduped,) = run_sql(dedupe_block)
    assert len(deduped) == len({r["case_id"] for r in deduped}) == len({r["case_id"] for r in overview})
    (steps_deduped,) = run_sql(steps_dedupe_block)
    keys = [(r["case_id"], r["index"]) for r in steps_deduped]
    assert len(keys) == len(set(keys)) and in_reader_dir.accepted["case_id"] in {k for k, _ in keys}


def python_blocks() -> dict[str, str]:
    blocks = code_blocks(EXPORTER_README, "python")
    return {b.split("\n")[0].split()[1] if b.startswith("import") else "spark": b for b in blocks}


def test_exporter_readme_pandas_and_polars(in_reader_dir):
    blocks = python_blocks()
    assert set(blocks) == {"pandas", "polars", "spark"}, "a new reader snippet needs a test here"

    scope = {}
    exec(blocks["pandas"], scope)
    cases, steps = scope["cases"], scope["steps"]
    assert in_reader_dir.accepted["case_id"] in set(cases.case_id)
    assert "dt" in cases.columns and str(cases.dt.iloc[0]).startswith("20")
    mine = steps[steps.case_id == in_reader_dir.accepted["case_id"]]
    assert sorted(mine.kind) == ["llm", "llm", "tool"]

    scope = {}
    exec(blocks["polars"], scope)
    calls = scope["calls"]
    row = calls.filter(calls["case_id"] == in_reader_dir.accepted["case_id"]).row(0, named=True)
    assert (row["name"], row["arguments"]) == ("get_weather", ARGUMENTS)
    assert "dt" in scope["cases"].columns


def test_exporter_readme_spark(in_reader_dir, spark):
    scope = {"spark": spark}
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        exec(python_blocks()["spark"], scope)
    assert in_reader_dir.accepted["case_id"] in shown.getvalue()
    assert "it is mild in Paris" in shown.getvalue()
