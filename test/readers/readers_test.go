// Package readers opens the datasets written by the replay_parquet exporter with readers that
// share no code with parquet-go: DuckDB (duckdb-go, the engine notebooks use) and Apache Arrow
// (arrow-go pqarrow, the library under pandas/pyarrow and Polars' arrow layer). It is a module of
// its own so that the collector does not depend on them.
package readers

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// writeDataset runs fixture runs through the processor and the exporter into a new root.
func writeDataset(t *testing.T, runs []string, traces []ptrace.Traces) (string, []*replaycase.Case) {
	root := filepath.Join(t.TempDir(), "reprise-data")
	exp := testdataset.Writer(t, root, "zstd")
	var cases []*replaycase.Case
	if traces == nil {
		cases = testpipeline.Run(t, exp, runs...)
	} else {
		cases = testpipeline.RunTraces(t, exp, runs, traces)
	}
	require.NoError(t, exp.Shutdown(context.Background()))
	return root, cases
}

func duck(t *testing.T) *sql.DB {
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func describe(t *testing.T, db *sql.DB, from string) map[string]string {
	rows, err := db.Query("DESCRIBE SELECT * FROM " + from)
	require.NoError(t, err)
	defer rows.Close()
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		var null, key, def, extra sql.NullString
		require.NoError(t, rows.Scan(&name, &typ, &null, &key, &def, &extra))
		types[name] = typ
	}
	return types
}

func TestDuckDBReadsTheDatasets(t *testing.T) {
	root, _ := writeDataset(t, []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent}, nil)
	db := duck(t)
	cases := "read_parquet('" + root + "/cases/**/*.parquet', hive_partitioning = true)"

	types := describe(t, db, cases)
	assert.Equal(t, "DATE", types["dt"], "the dt partition column appears")
	assert.Equal(t, "TIMESTAMP WITH TIME ZONE", types["start_time"])
	assert.True(t, strings.HasPrefix(types["input_messages"], "STRUCT(\"role\" VARCHAR, \"name\" VARCHAR, finish_reason VARCHAR, parts STRUCT(\"type\" VARCHAR, \"content\" VARCHAR"), types["input_messages"])
	assert.True(t, strings.HasSuffix(types["input_messages"], ")[])[]"), "a list of structs holding a list of structs: %s", types["input_messages"])
	assert.True(t, strings.HasPrefix(types["steps"], "STRUCT(\"index\" BIGINT, kind VARCHAR"), types["steps"])
	assert.True(t, strings.HasSuffix(types["steps"], "[]"), types["steps"])
	assert.True(t, strings.HasPrefix(types["tool_calls"], "STRUCT(id VARCHAR, \"name\" VARCHAR, arguments VARCHAR, result VARCHAR"), types["tool_calls"])
	assert.Equal(t, "MAP(VARCHAR, VARCHAR)", types["metadata"])
	assert.True(t, strings.HasPrefix(types["usage"], "STRUCT(input_tokens BIGINT"), types["usage"])

	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM "+cases).Scan(&n))
	assert.Equal(t, 2, n, "otel-events and traceloop are accepted")

	var (
		agent, status, system, user, final, toolName, args, result, doc0, doc1, dt, expected string
		score0, score1                                                                       float64
		steps, totalTokens                                                                   int64
	)
	require.NoError(t, db.QueryRow(`
		SELECT agent_name, status, input_messages[1].parts[1].content, input_messages[2].parts[1].content,
		       final_output.parts[1].content, tool_calls[1].name, tool_calls[1].arguments, tool_calls[1].result,
		       retrieval_refs[1].documents[1].id, retrieval_refs[1].documents[1].score,
		       retrieval_refs[1].documents[2].id, retrieval_refs[1].documents[2].score,
		       len(steps), usage.total_tokens, strftime(dt, '%Y-%m-%d'), coalesce(assertions['expected'], '')
		FROM `+cases+` WHERE provenance.service_name = 'holdout-agent-otel'`).Scan(
		&agent, &status, &system, &user, &final, &toolName, &args, &result, &doc0, &score0, &doc1, &score1, &steps, &totalTokens, &dt, &expected))
	assert.Equal(t, "weather-bot", agent)
	assert.Equal(t, "accepted", status)
	assert.True(t, strings.HasPrefix(system, "You are a weather assistant."))
	assert.Equal(t, "What is the weather in Paris today?", user)
	assert.Equal(t, `Answer #2: based on {"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"} it is mild in Paris.`, final)
	assert.Equal(t, "get_weather", toolName)
	assert.Equal(t, `{"city":"Paris","unit":"celsius"}`, args)
	assert.Equal(t, `{"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"}`, result)
	assert.Equal(t, "doc-paris-climate", doc0)
	assert.InDelta(t, 0.91, score0, 1e-9)
	assert.Equal(t, "doc-weather-api", doc1)
	assert.InDelta(t, 0.77, score1, 1e-9)
	assert.Equal(t, int64(4), steps)
	assert.Equal(t, int64(214), totalTokens)
	assert.Equal(t, "2026-11-30", dt)
	assert.Equal(t, "", expected, "the default processor config extracts no assertions")

	var llmCalls, toolSteps int
	require.NoError(t, db.QueryRow(`SELECT count(*) FILTER (kind = 'llm'), count(*) FILTER (kind = 'tool')
		FROM read_parquet('`+root+`/steps/**/*.parquet', hive_partitioning = true)`).Scan(&llmCalls, &toolSteps))
	assert.Equal(t, 4, llmCalls)
	assert.Equal(t, 2, toolSteps)

	// steps/ leaves the span ids to cases/: the join the exporter README documents finds each
	// step's span id there.
	var stepRows, nullSpanIDs, joined int
	require.NoError(t, db.QueryRow(`SELECT count(*), count(*) FILTER (s.trace_id IS NULL AND s.span_id IS NULL AND s.parent_span_id IS NULL
		    AND s.tool_call.span_id IS NULL AND s.tool_call.requested_by IS NULL AND s.retrieval.span_id IS NULL),
		  count(*) FILTER (c.trace_id IS NOT NULL AND c.step.span_id IS NOT NULL)
		FROM read_parquet('`+root+`/steps/**/*.parquet', hive_partitioning = true) s
		LEFT JOIN (SELECT case_id, provenance.trace_id, unnest(steps) AS step FROM read_parquet('`+root+`/cases/**/*.parquet')) c
		  ON c.case_id = s.case_id AND c.step."index" = s."index"`).Scan(&stepRows, &nullSpanIDs, &joined))
	assert.Positive(t, stepRows)
	assert.Equal(t, stepRows, nullSpanIDs)
	assert.Equal(t, stepRows, joined)

	var code, detail string
	require.NoError(t, db.QueryRow(`SELECT reasons[1].code, reasons[1].detail
		FROM read_parquet('`+root+`/quarantine/**/*.parquet', hive_partitioning = true)`).Scan(&code, &detail))
	assert.Equal(t, "no_input_messages", code)
	assert.Contains(t, detail, "no input messages")

	var version string
	require.NoError(t, db.QueryRow(`SELECT decode(value) FROM parquet_kv_metadata('`+root+`/cases/**/*.parquet') WHERE decode(key) = 'replaycase.schema_version' LIMIT 1`).Scan(&version))
	assert.Equal(t, "replay-case.v1", version)
}

// caseV1Plus is replay-case.v1 with one more optional column, as a later minor version adds.
type caseV1Plus struct {
	replaycase.Case
	Tenant *string `parquet:"tenant,optional"`
}

func TestDuckDBUnionByNameReadsMixedVersions(t *testing.T) {
	root, cases := writeDataset(t, []string{testfixtures.OTelEvents}, nil)
	tenant := "acme"
	extra := caseV1Plus{Case: *cases[0], Tenant: &tenant}
	extra.CaseID = "extra-case"
	dir := filepath.Join(root, "cases", "dt=2026-12-01")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, parquet.WriteFile(filepath.Join(dir, "part-extra.zstd.parquet"), []caseV1Plus{extra}))

	db := duck(t)
	rows, err := db.Query(`SELECT case_id, tenant, strftime(dt, '%Y-%m-%d') FROM read_parquet('` + root + `/cases/**/*.parquet', hive_partitioning = true, union_by_name = true) ORDER BY dt`)
	require.NoError(t, err)
	defer rows.Close()
	var got [][3]string
	for rows.Next() {
		var id, dt string
		var tn sql.NullString
		require.NoError(t, rows.Scan(&id, &tn, &dt))
		got = append(got, [3]string{id, tn.String, dt})
	}
	assert.Equal(t, [][3]string{{cases[0].CaseID, "", "2026-11-30"}, {"extra-case", "acme", "2026-12-01"}}, got)
}

// readArrow reads every file of a dataset with arrow-go and returns the tables' schema and rows.
func readArrow(t *testing.T, dir string) (*arrow.Schema, int64, []arrow.Table) {
	var schema *arrow.Schema
	var rows int64
	var tables []arrow.Table
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		pf, err := file.OpenParquetFile(path, false)
		require.NoError(t, err)
		defer pf.Close()
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
		require.NoError(t, err)
		tbl, err := fr.ReadTable(context.Background())
		require.NoError(t, err, path)
		schema, rows = tbl.Schema(), rows+tbl.NumRows()
		tables = append(tables, tbl)
		return nil
	}))
	return schema, rows, tables
}

func TestArrowReadsTheDatasets(t *testing.T) {
	root, _ := writeDataset(t, []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent}, nil)
	schema, rows, tables := readArrow(t, filepath.Join(root, "cases"))
	assert.Equal(t, int64(2), rows)
	field := func(name string) arrow.Field {
		idx := schema.FieldIndices(name)
		require.Len(t, idx, 1, name)
		return schema.Field(idx[0])
	}
	assert.Equal(t, "list<element: struct<role: utf8, name: utf8 nullable, finish_reason: utf8 nullable, parts: list<element: struct<type: utf8, content: utf8 nullable, id: utf8 nullable, name: utf8 nullable, arguments: utf8 nullable, response: utf8 nullable, mime_type: utf8 nullable, modality: utf8 nullable, uri: utf8 nullable, file_id: utf8 nullable, item_id: utf8 nullable, is_error: bool nullable>>>>", field("input_messages").Type.String())
	assert.Equal(t, "timestamp[us, tz=UTC]", field("start_time").Type.String())
	assert.Equal(t, arrow.MAP, field("metadata").Type.ID())
	assert.Equal(t, arrow.LIST, field("steps").Type.ID())
	var agents []string
	for _, tbl := range tables {
		col := tbl.Column(tbl.Schema().FieldIndices("agent_name")[0])
		for _, chunk := range col.Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				agents = append(agents, chunk.ValueStr(i))
			}
		}
		tbl.Release()
	}
	assert.Equal(t, []string{"weather-bot", "weather-bot"}, agents)

	_, stepRows, _ := readArrow(t, filepath.Join(root, "steps"))
	assert.Equal(t, int64(8), stepRows)
	_, quarantined, _ := readArrow(t, filepath.Join(root, "quarantine"))
	assert.Equal(t, int64(1), quarantined)
}

func TestArrowReadsLargeValues(t *testing.T) {
	big, size := testpipeline.BigRun(t)
	root, cases := writeDataset(t, []string{testfixtures.Traceloop}, []ptrace.Traces{big})
	require.Len(t, cases, 1)
	_, rows, tables := readArrow(t, root)
	assert.Equal(t, int64(1+4), rows, "the case and its 4 steps")
	found := false
	for _, tbl := range tables {
		if idx := tbl.Schema().FieldIndices("tool_calls"); len(idx) == 1 {
			found = true
			assert.Positive(t, tbl.Column(idx[0]).Len())
		}
		tbl.Release()
	}
	assert.True(t, found)
	assert.Len(t, cases[0].ToolCalls[0].Result, size)
}

// Invalid UTF-8 in one string used to make DuckDB refuse every query over the dataset ("not
// valid UTF8"), the file's other cases included. The exporter repairs it to U+FFFD.
func TestDuckDBReadsCasesThatHeldInvalidUTF8(t *testing.T) {
	cases := testpipeline.Run(t, nil, testfixtures.OTelEvents, testfixtures.Traceloop)
	require.Len(t, cases, 2)
	bad := cases[0]
	bad.AgentName = "weather-bot\xff"
	bad.InputMessages[len(bad.InputMessages)-1].Parts[0].Content = "Paris?\xc3("
	bad.Steps[1].Name = "chat \xe2\x82"
	td := ptrace.NewTraces()
	for _, c := range cases {
		require.NoError(t, replaycase.Encode(c, td))
	}
	root := filepath.Join(t.TempDir(), "reprise-data")
	exp := testdataset.Writer(t, root, "zstd")
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	require.NoError(t, exp.Shutdown(context.Background()))

	db := duck(t)
	var agent, question string
	require.NoError(t, db.QueryRow(`SELECT agent_name, input_messages[-1].parts[1].content
		FROM read_parquet('`+root+`/`+dataset.Cases+`/**/*.parquet', hive_partitioning = true) WHERE case_id = ?`, bad.CaseID).Scan(&agent, &question))
	assert.Equal(t, "weather-bot\uFFFD", agent)
	assert.Equal(t, "Paris?\uFFFD(", question)
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM read_parquet('`+root+`/`+dataset.Cases+`/**/*.parquet') WHERE agent_name LIKE 'weather-bot%'`).Scan(&n))
	assert.Equal(t, 2, n, "the file's other case reads too")
	var name string
	require.NoError(t, db.QueryRow(`SELECT name FROM read_parquet('`+root+`/`+dataset.Steps+`/**/*.parquet') WHERE case_id = ? AND "index" = 1`, bad.CaseID).Scan(&name))
	assert.Equal(t, "chat \uFFFD", name)
}
