"""examples/reprise-datasets.ipynb runs top to bottom under nbclient against a dataset this
session just recorded, and prints what it promises: the question, the answer, the tool
arguments, the tokens, and the quarantine reasons."""

import nbclient
import nbformat

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

    def shown_by(fragment: str) -> str:
        """What the first code cell whose source contains `fragment` showed."""
        return next(cell_text(c) for c in code if fragment in c.source)

    # DuckDB: one row per case with question, answer, tool count and tokens.
    overview = shown_by("import duckdb")
    for case in (dataset.accepted, dataset.quickstart):
        assert case["case_id"] in overview
    assert PROMPT in overview and ANSWER in overview
    assert "177" in overview, "the Python run's tokens: 71+17 + 72+17"
    assert "214" in overview, "the quick start run's tokens"
    # DuckDB: every tool call with its arguments and result.
    tools = shown_by("SELECT case_id, tc.name")
    assert "get_weather" in tools and ARGUMENTS in tools and RESULT in tools
    # DuckDB: quarantine reasons, counted.
    reasons = shown_by("SELECT r.code")
    assert "no_input_messages" in reasons and "no_model_output" in reasons
    # pandas: one row per case, with its dt partition and status.
    frame = shown_by("cases = pd.read_parquet")
    assert dataset.accepted["case_id"] in frame and "accepted" in frame and "2026-" in frame
    latency = shown_by("# per-call latency")
    assert "latency_ms" in latency and "total_tokens" in latency and "chat gpt-4o-mini" in latency
    # Polars: the tool calls exploded and unnested into columns.
    polars = shown_by("import polars")
    assert "arguments" in polars and "call_1_0" in polars
    # Spark: the nested final_output parts.
    spark = shown_by("from pyspark.sql")
    assert "weather-bot" in spark and "it is mild in Paris" in spark
