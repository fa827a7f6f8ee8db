"""PySpark (local mode, Java 17) reads the recorded datasets with no options beyond mergeSchema:
the Hive partition column, timestamps, and the nested messages, tool calls, steps and reasons."""

from pyspark.sql import functions as F
from pyspark.sql import types as T

from test_record_replay import ANSWER, ARGUMENTS, PROMPT, RESULT


def test_spark_reads_cases_steps_and_quarantine(dataset, spark):
    root = str(dataset.root)
    cases = spark.read.option("mergeSchema", "true").parquet(f"{root}/cases")
    fields = {f.name: f.dataType for f in cases.schema.fields}
    assert fields["dt"] == T.DateType(), "dt=YYYY-MM-DD directories become a DATE column"
    assert fields["start_time"] == T.TimestampType()
    assert isinstance(fields["tool_calls"], T.ArrayType) and isinstance(fields["tool_calls"].elementType, T.StructType)
    assert isinstance(fields["metadata"], T.MapType)

    row = (
        cases.where(F.col("case_id") == dataset.accepted["case_id"])
        .select(
            "dt",
            "agent_name",
            F.element_at("input_messages", -1).parts[0].content.alias("question"),
            F.col("final_output.parts")[0].content.alias("answer"),
            F.col("tool_calls")[0].alias("tool_call"),
            F.col("usage.total_tokens").alias("tokens"),
            F.transform("steps", lambda s: s.kind).alias("kinds"),
        )
        .collect()
    )
    assert len(row) == 1
    row = row[0]
    assert str(row.dt) == dataset.accepted["start_time"][:10]
    assert (row.agent_name, row.question, row.answer, row.tokens) == ("weather-bot", PROMPT, ANSWER, 177)
    assert (row.tool_call.name, row.tool_call.arguments, row.tool_call.result) == ("get_weather", ARGUMENTS, RESULT)
    assert [k for k in row.kinds if k != "agent"] == ["llm", "tool", "llm"]

    steps = spark.read.option("mergeSchema", "true").parquet(f"{root}/steps")
    llm = (
        steps.where((F.col("case_id") == dataset.accepted["case_id"]) & (F.col("kind") == "llm"))
        .select("dt", "usage.input_tokens", "usage.output_tokens")
        .orderBy("input_tokens")
        .collect()
    )
    assert [(r.input_tokens, r.output_tokens) for r in llm] == [(71, 17), (72, 17)]

    quarantine = spark.read.option("mergeSchema", "true").parquet(f"{root}/quarantine")
    codes = {
        r.code
        for r in quarantine.where(F.col("case_id") == dataset.quarantined["case_id"])
        .select(F.explode("reasons").alias("r"))
        .select("r.code")
        .collect()
    }
    assert codes == {"no_input_messages", "no_model_output"}
    raw = (
        quarantine.where(F.col("case_id") == dataset.quarantined["case_id"])
        .select(F.length("raw_spans").alias("n"))
        .first()
    )
    assert raw.n > 0, "quarantined cases keep their raw OTLP spans"


def test_spark_filters_cases_on_a_nested_trace_id(dataset, spark):
    """A predicate on a nested field of a column written without bounds (provenance.trace_id):
    Spark filters pages with the column index, and one whose pages all read "" as min and max
    returned no row, with no error (dataset/column_index.go)."""
    trace_id = dataset.accepted["provenance"]["trace_id"]
    assert len(trace_id) == 32, trace_id
    spark.read.option("mergeSchema", "true").parquet(f"{dataset.root}/cases").createOrReplaceTempView("cases")
    rows = spark.sql(
        f"SELECT case_id, provenance.trace_id AS trace_id FROM cases WHERE provenance.trace_id = '{trace_id}'"
    ).collect()
    assert [(r.case_id, r.trace_id) for r in rows] == [(dataset.accepted["case_id"], trace_id)]
