package replayparquetexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadatatest"
	"github.com/reprise-dev/reprise/internal/testdataset/faults"
	"github.com/reprise-dev/reprise/internal/testdataset/roundtrip"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

func testConfig(t testing.TB) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = filepath.Join(t.TempDir(), "data")
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]() // synchronous: push returns when files are published
	return cfg
}

func newExporter(t testing.TB, cfg *Config) exporter.Traces {
	exp, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	return exp
}

// pipeline runs fixture runs through the replay_case processor into the exporter and returns
// the cases the processor emitted.
func pipeline(t *testing.T, cfg *Config, runs ...string) []*replaycase.Case {
	exp := newExporter(t, cfg)
	emitted := testpipeline.Run(t, exp, runs...)
	require.NoError(t, exp.Shutdown(context.Background()))
	return emitted
}

// files lists the files under root (none when root does not exist), relative and sorted.
func files(t *testing.T, root string) []string {
	var out []string
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			out = append(out, rel)
		}
		return err
	}))
	sort.Strings(out)
	return out
}

func readAll[T any](t *testing.T, root, ds string) []T {
	var rows []T
	for _, f := range files(t, filepath.Join(root, ds)) {
		path := filepath.Join(root, ds, f)
		if _, isCase := any(rows).([]replaycase.Case); isCase {
			got, err := dataset.ReadCases(path) // with the span ids a file stores once put back
			require.NoError(t, err)
			rows = append(rows, any(got).([]T)...)
			continue
		}
		got, err := parquet.ReadFile[T](path)
		require.NoError(t, err)
		rows = append(rows, got...)
	}
	return rows
}

func TestFixturesBecomeDatasets(t *testing.T) {
	cfg := testConfig(t)
	emitted := pipeline(t, cfg, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	require.Len(t, emitted, 3)

	layout := files(t, cfg.Directory)
	require.Len(t, layout, 3, "one file per dataset: %v", layout)
	for i, dataset := range []string{dataset.Cases, dataset.Quarantine, dataset.Steps} {
		assert.Regexp(t, `^`+dataset+`/dt=2026-11-30/part-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.zstd\.parquet$`, layout[i])
	}
	assert.Empty(t, files(t, cfg.staging()), "nothing is left in staging")

	var accepted, quarantined []replaycase.Case
	for _, c := range emitted {
		if c.Status == replaycase.StatusAccepted {
			accepted = append(accepted, *c)
		} else {
			quarantined = append(quarantined, *c)
		}
	}
	sortCases(accepted)
	gotCases := readAll[replaycase.Case](t, cfg.Directory, dataset.Cases)
	sortCases(gotCases)
	require.Len(t, gotCases, 2)
	for i := range accepted {
		roundtrip.AssertSameCase(t, accepted[i], gotCases[i])
	}
	gotQuarantine := readAll[replaycase.Case](t, cfg.Directory, dataset.Quarantine)
	require.Len(t, gotQuarantine, 1)
	roundtrip.AssertSameCase(t, quarantined[0], gotQuarantine[0])
	assert.NotEmpty(t, gotQuarantine[0].RawSpans, "quarantine keeps the raw spans for a re-drive")
	raw, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(gotQuarantine[0].RawSpans)
	require.NoError(t, err)
	assert.Equal(t, 5, raw.SpanCount())
	events, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(gotQuarantine[0].RawEvents)
	require.NoError(t, err)
	assert.Equal(t, 8, events.LogRecordCount())

	steps := readAll[dataset.StepRow](t, cfg.Directory, dataset.Steps)
	require.Len(t, steps, 8, "4 steps for each accepted case")
	for _, st := range steps {
		assert.Contains(t, []string{accepted[0].CaseID, accepted[1].CaseID}, st.CaseID)
		assert.Empty(t, st.TraceID+st.SpanID+st.ParentSpanID, "ids are stored in cases/ only")
		assert.NotEmpty(t, st.Kind)
	}
}

func sortCases(cs []replaycase.Case) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].CaseID < cs[j].CaseID })
}

func TestFooterNamesTheSchemaVersion(t *testing.T) {
	cfg := testConfig(t)
	pipeline(t, cfg, testfixtures.OTelEvents)
	path := filepath.Join(cfg.Directory, files(t, cfg.Directory)[0])
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	info, _ := f.Stat()
	pf, err := parquet.OpenFile(f, info.Size())
	require.NoError(t, err)
	v, ok := pf.Lookup(dataset.SchemaVersionKey)
	assert.True(t, ok)
	assert.Equal(t, replaycase.SchemaVersion, v)
}

func TestLargeValuesDoNotBloatTheFile(t *testing.T) {
	cfg := testConfig(t)
	exp := newExporter(t, cfg)
	big, perValue := testpipeline.BigRun(t)
	cases := testpipeline.RunTraces(t, exp, []string{testfixtures.Traceloop}, []ptrace.Traces{big})
	require.NoError(t, exp.Shutdown(context.Background()))
	require.Len(t, cases, 1)
	c := cases[0]
	// The case row holds the prompt 3 times (case input, both LLM steps' inputs) and the result
	// 3 times (tool call, tool step, second LLM input); a steps/ row set holds each twice. The
	// files must be no larger than those copies: without the statistics rules every large value
	// would also be copied into page headers and the footer as min and max.
	size := func(dataset string) int64 {
		var total int64
		for _, f := range files(t, filepath.Join(cfg.Directory, dataset)) {
			info, err := os.Stat(filepath.Join(cfg.Directory, dataset, f))
			require.NoError(t, err)
			total += info.Size()
		}
		return total
	}
	t.Logf("cases/: %d bytes for 6 copies of %d; steps/: %d bytes for 4 copies", size(dataset.Cases), perValue, size(dataset.Steps))
	assert.Less(t, size(dataset.Cases), int64(6*perValue))
	assert.Less(t, size(dataset.Steps), int64(4*perValue))
	got := readAll[replaycase.Case](t, cfg.Directory, dataset.Cases)
	require.Len(t, got, 1)
	assert.Equal(t, c.ToolCalls[0].Result, got[0].ToolCalls[0].Result)
}

// Disk full until the retries ran out used to leave cases/ rows without their steps/ rows and
// lose the batch's other cases with the error visible only at INFO.
func TestWriteFailureDeadLettersTheBatch(t *testing.T) {
	td, cases := caseSpans(t, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	cfg := testConfig(t)
	cfg.RetryConfig.Enabled = false // one attempt: the queue's retries are not under test
	full := newObserved(t, cfg, faults.DiskFull(4096, dataset.Steps))
	err := full.ConsumeTraces(context.Background(), td)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, full.Shutdown(context.Background()))

	for _, d := range []string{dataset.Cases, dataset.Steps, dataset.Quarantine} {
		assert.NoDirExists(t, filepath.Join(cfg.Directory, d), "no file of the failed batch is visible")
	}
	dead := files(t, filepath.Join(cfg.Directory, dataset.Failed))
	require.Len(t, dead, 1)
	assert.Regexp(t, `^batch-[0-9a-f]{32}\.otlp\.binpb$`, dead[0])
	payload, err := os.ReadFile(filepath.Join(cfg.Directory, dataset.Failed, dead[0]))
	require.NoError(t, err)
	redrive, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(payload)
	require.NoError(t, err)
	again, err := replaycase.Decode(redrive)
	require.NoError(t, err, "the dead letter holds the batch's case spans in the canonical form")
	require.Len(t, again, len(cases))

	logged := full.logs.FilterLevelExact(zap.ErrorLevel).FilterMessageSnippet("dead-lettered").All()
	require.Len(t, logged, 1)
	ids, _ := logged[0].ContextMap()["case_ids"].([]any)
	assert.Len(t, ids, 3, "every case id of the batch is logged")
	metadatatest.AssertEqualExporterReplayParquetWriteFailures(t, full.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterReplayParquetCasesDeadLettered(t, full.tel, []metricdata.DataPoint[int64]{{Value: 3}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	// The disk has space again and the queue retries the batch (here: the same spans again,
	// into a restarted exporter): it is written, and its dead letter removed.
	fine := newObserved(t, cfg)
	require.NoError(t, fine.ConsumeTraces(context.Background(), redrive))
	require.NoError(t, fine.Shutdown(context.Background()))
	assert.Len(t, readAll[replaycase.Case](t, cfg.Directory, dataset.Cases), 2)
	assert.Len(t, readAll[dataset.StepRow](t, cfg.Directory, dataset.Steps), 8)
	assert.Len(t, readAll[replaycase.Case](t, cfg.Directory, dataset.Quarantine), 1)
	assert.Empty(t, files(t, filepath.Join(cfg.Directory, dataset.Failed)), "the retry that succeeded removed the dead letter")
}

// A retry that commits a batch to staging but cannot publish it yet (dataset.ErrCommitted) has
// made it durable: the dead letter an earlier failed attempt left is removed then, as after a
// full write, or re-driving failed/ would write the batch a second time.
func TestCommittedRetryRemovesTheDeadLetter(t *testing.T) {
	td, cases := caseSpans(t, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	cfg := testConfig(t)
	cfg.RetryConfig.Enabled = false
	full := newObserved(t, cfg, faults.DiskFull(4096, dataset.Steps))
	require.Error(t, full.ConsumeTraces(context.Background(), td))
	require.NoError(t, full.Shutdown(context.Background()))
	require.Len(t, files(t, filepath.Join(cfg.Directory, dataset.Failed)), 1)

	// The retry commits, but publishing cases/ fails: a file stands where its directory goes.
	require.NoError(t, os.WriteFile(filepath.Join(cfg.Directory, dataset.Cases), nil, 0o644))
	retry := newObserved(t, cfg)
	require.NoError(t, retry.ConsumeTraces(context.Background(), td))
	require.NoError(t, os.Remove(filepath.Join(cfg.Directory, dataset.Cases)))
	require.NoError(t, retry.Shutdown(context.Background())) // publishes the committed batch
	written := len(readAll[replaycase.Case](t, cfg.Directory, dataset.Cases)) + len(readAll[replaycase.Case](t, cfg.Directory, dataset.Quarantine))
	assert.Equal(t, len(cases), written, "every case once, accepted or quarantined")
	assert.Empty(t, files(t, filepath.Join(cfg.Directory, dataset.Failed)))
}

// The caller learns that a batch is written only from a nil error: a batch reported as failed
// is sent again (by replay_case, or the sending queue). So a write must not be reported as
// failed because exporterhelper's timeout fired while it was under way, or the batch would be
// written twice. Here the timeout has fired before the write starts (a 1 ns timeout): the write
// still completes, and is reported as done.
func TestAWriteIsReportedDoneAlthoughItsTimeoutFired(t *testing.T) {
	for _, fileMaxAge := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("file_max_age %s", fileMaxAge), func(t *testing.T) {
			td, cases := caseSpans(t, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
			cfg := testConfig(t)
			cfg.FileMaxAge = fileMaxAge
			cfg.Timeout = time.Nanosecond
			cfg.RetryConfig.Enabled = false // one attempt: what it reports is under test
			exp := newExporter(t, cfg)
			require.NoError(t, exp.ConsumeTraces(context.Background(), td), "a batch that was written is reported as written")
			require.NoError(t, exp.Shutdown(context.Background()))
			written := len(readAll[replaycase.Case](t, cfg.Directory, dataset.Cases)) + len(readAll[replaycase.Case](t, cfg.Directory, dataset.Quarantine))
			assert.Equal(t, len(cases), written, "every case once")
		})
	}
}
