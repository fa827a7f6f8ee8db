"""examples/reprise-datasets.ipynb runs top to bottom under nbclient against a dataset this
session just recorded, and prints what it promises: the question, the answer, the tool
arguments, the tokens, and the quarantine reasons."""

import html
import re

import nbclient
import nbformat
import pyarrow.parquet as pq

from conftest import REPO
from test_record_replay import ANSWER, ARGUMENTS, PROMPT, RESULT

NOTEBOOK = REPO / "examples" / "reprise-datasets.ipynb"


def cell_text(cell) -> str:
    """Everything a code cell showed: printed streams and the plain-text form of its results."""
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream" and output["name"] == "stdout":
            parts.append(output["text"])
        elif output["output_type"] in ("execute_result", "display_data"):
            parts.append(output["data"].get("text/plain", ""))
    return "\n".join(parts)


def table_rows(cell) -> list[list[str]]:
    """The rows of the HTML tables a cell displayed (pandas frames), each cell's text unescaped."""
    shown = "".join(
        output["data"]["text/html"]
        for output in cell.get("outputs", [])
        if output["output_type"] in ("execute_result", "display_data") and "text/html" in output["data"]
    )
    return [
        [html.unescape(td).strip() for td in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", shown, re.S)
    ]


def row_of(rows: list[list[str]], case_id: str) -> list[str]:
    found = [row for row in rows if case_id in row]
    assert len(found) == 1, f"{len(found)} rows for case {case_id}: {rows}"
    return found[0]


def quarantined_cases_with(root, code: str) -> int:
    """How many distinct quarantined cases on disk have `code` among their reasons."""
    quarantine = pq.read_table(root / "quarantine", columns=["case_id", "reasons"]).to_pylist()
    return len({row["case_id"] for row in quarantine if any(r["code"] == code for r in row["reasons"])})


def test_notebook_runs_against_a_fresh_dataset(dataset, monkeypatch):
    monkeypatch.setenv("REPRISE_DATA", str(dataset.root))  # the kernel inherits it
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()

    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in code:
        errors = [o for o in cell.get("outputs", []) if o["output_type"] == "error"]
        assert not errors, f"{cell.source}\n{errors}"

    def shown_by(fragment: str):
        """The first code cell whose source contains `fragment`."""
        return next(c for c in code if fragment in c.source)

    # DuckDB: one row per case (deduplicated) with question, answer, tool count and tokens.
    overview = table_rows(shown_by("import duckdb"))
    row = row_of(overview, dataset.accepted["case_id"])
    assert [PROMPT, ANSWER, "1", "177"] == row[-4:], "tokens: 71+17 + 72+17"
    assert row_of(overview, dataset.quickstart["case_id"])[-1] == "214", "the quick start run's tokens"
    # DuckDB: every tool call with its arguments and result.
    tools = table_rows(shown_by("SELECT case_id, tc.name"))
    assert row_of(tools, dataset.accepted["case_id"])[-3:] == ["get_weather", ARGUMENTS, RESULT]
    # DuckDB: quarantine reasons, each with the number of cases it holds (a case whose two model
    # calls lack content has the code twice, and is still one case).
    reasons = {row[1]: int(row[2]) for row in table_rows(shown_by("SELECT r.code"))[1:]}
    for reason in ("no_input_messages", "no_model_output"):
        assert reasons[reason] == quarantined_cases_with(dataset.root, reason), reasons
    # pandas: one row per case, with its dt partition and status.
    frame = table_rows(shown_by("cases = pd.read_parquet"))
    assert row_of(frame, dataset.accepted["case_id"])[1:] == [
        dataset.accepted["start_time"][:10],
        dataset.accepted["case_id"],
        "weather-bot",
        "accepted",
    ]
    latency = table_rows(shown_by("# per-call latency"))
    assert latency[0][1:4] == ["case_id", "name", "latency_ms"] and "total_tokens" in latency[0]
    assert sum(1 for row in latency if dataset.accepted["case_id"] in row) == 2, "two model calls"
    # Polars: the tool calls exploded and unnested into columns.
    polars = cell_text(shown_by("import polars"))
    assert "arguments" in polars and "call_1_0" in polars
    # Spark: the nested final_output parts.
    spark = cell_text(shown_by("from pyspark.sql"))
    assert dataset.accepted["case_id"] in spark and "it is mild in Paris" in spark
