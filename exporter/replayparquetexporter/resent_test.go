package replayparquetexporter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadatatest"
	"github.com/reprise-dev/reprise/internal/droplog/droplogtest"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// config/local.yaml's chain, killed after the exporter wrote the cases and before the processor
// released their records: the restarted processor sends them again marked Resent, and the
// restarted exporter writes each once, counts the cases it did not write twice and names them
// at warn level. The killed exporter's copy is in a segment the restarted one adopts, or was
// published before the kill (merged from segments, or at once without file_max_age): the
// restarted one reads the files published within the hour.
func TestCasesSentAgainAfterACrashAreWrittenOnce(t *testing.T) {
	for name, copyLeft := range map[string]struct {
		fileMaxAge time.Duration
		merged     bool
	}{
		"in a staged segment":            {fileMaxAge: time.Hour},
		"merged and published":           {fileMaxAge: time.Hour, merged: true},
		"published without file_max_age": {},
	} {
		t.Run(name, func(t *testing.T) {
			_, cases := caseSpans(t, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
			cfg := testConfig(t)
			cfg.FileMaxAge = copyLeft.fileMaxAge

			// The killed collector's exporter.
			killed, err := dataset.NewWriter(dataset.WriterConfig{
				Root: cfg.root(), Staging: cfg.staging(), Compression: cfg.Compression,
				MaxRowsPerFile: cfg.MaxRowsPerFile, RowGroupRows: cfg.RowGroupRows,
				FileMaxAge: cfg.FileMaxAge, FileMaxStagedBytes: cfg.FileMaxStagedSize,
			})
			require.NoError(t, err)
			_, err = killed.Recover(time.Now().Add(-staleAfter))
			require.NoError(t, err)
			_, err = killed.Write(cases)
			require.NoError(t, err)
			if copyLeft.merged {
				_, err = killed.Flush(true)
				require.NoError(t, err)
			}
			require.NoError(t, killed.Close()) // lets go of its owner lock, as the end of the process does

			exp := newObserved(t, cfg) // adopts a segment at its start
			ids := sendAgain(t, exp, cases)

			byID := rowsByID(t, cfg.Directory)
			assert.Len(t, byID, len(cases))
			for _, c := range cases {
				assert.Equal(t, 1, byID[c.CaseID], "case %s: one row", c.CaseID)
			}
			assert.Len(t, readAll[dataset.StepRow](t, cfg.Directory, dataset.Steps), stepsOf(cases), "the steps of each case once")
			metadatatest.AssertEqualExporterReplayParquetCasesResent(t, exp.tel, []metricdata.DataPoint[int64]{{Value: int64(len(cases)), Attributes: attribute.NewSet(attribute.String("reason", "resent"))}},
				metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
			logged := exp.logs.FilterMessageSnippet("sent again after a crash").All()
			require.Len(t, logged, 1)
			assert.ElementsMatch(t, ids, logged[0].ContextMap()["case_ids"])
		})
	}
}

// sendAgain sends the cases to the restarted exporter marked Resent, as the restarted processor
// does, stops it, and returns their ids.
func sendAgain(t *testing.T, restarted observed, cases []*replaycase.Case) (ids []any) {
	again := ptrace.NewTraces()
	for _, c := range cases {
		c.Resent = true
		require.NoError(t, replaycase.Encode(c, again))
		ids = append(ids, c.CaseID)
	}
	require.NoError(t, restarted.ConsumeTraces(context.Background(), again))
	require.NoError(t, restarted.Shutdown(context.Background()))
	return ids
}

// rowsByID counts the cases/ and quarantine/ rows under root by case id.
func rowsByID(t *testing.T, root string) map[string]int {
	byID := map[string]int{}
	for _, ds := range []string{dataset.Cases, dataset.Quarantine} {
		for _, c := range readAll[replaycase.Case](t, root, ds) {
			byID[c.CaseID]++
		}
	}
	return byID
}

// stepsOf counts the steps of the accepted cases: steps/ holds theirs.
func stepsOf(cases []*replaycase.Case) int {
	n := 0
	for _, c := range cases {
		if c.Status != replaycase.StatusQuarantined {
			n += len(c.Steps)
		}
	}
	return n
}

// A restart that sends many cases again names every one it leaves out, not the first 100 of
// the batch: a case not written must be findable by its id. The count says which check left
// them out.
func TestEveryCaseLeftOutAsSentAgainIsNamed(t *testing.T) {
	cases := runsOf(t, 150)
	cfg := testConfig(t)
	writtenBeforeTheKill(t, cfg, cases)

	restarted := newObserved(t, cfg)
	ids := sendAgain(t, restarted, cases)

	assert.Len(t, rowsByID(t, cfg.Directory), len(cases))
	var named []any
	for _, l := range restarted.logs.FilterMessageSnippet("sent again after a crash").All() {
		named = append(named, l.ContextMap()["case_ids"].([]any)...)
	}
	assert.ElementsMatch(t, ids, named, "every case left out is named")
	metadatatest.AssertEqualExporterReplayParquetCasesResent(t, restarted.tel,
		[]metricdata.DataPoint[int64]{{Value: int64(len(cases)), Attributes: attribute.NewSet(attribute.String("reason", "resent"))}},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// The collector's logger samples repeated messages (by default the first 10 a tick, then 1 in
// 100): a restart that sends many batches again would name few of the cases left out. They are
// named on a logger of their own without sampling, as the processor names the cases it drops.
func TestCasesLeftOutAreNamedWhenTheCollectorSamplesItsLogs(t *testing.T) {
	ctx := context.Background()
	cases := runsOf(t, 30)
	cfg := testConfig(t)
	writtenBeforeTheKill(t, cfg, cases)

	stderr := captureStderr(t)
	set, _, logs := observedSettings(t)
	set.Logger = set.Logger.WithOptions(zap.WrapCore(droplogtest.Sampled))
	restarted, err := newTraces(ctx, set, cfg)
	require.NoError(t, err)
	require.NoError(t, restarted.Start(ctx, componenttest.NewNopHost()))
	var ids []any
	for _, c := range cases { // one batch each, as the processor sends them after a restart
		c.Resent = true
		again := ptrace.NewTraces()
		require.NoError(t, replaycase.Encode(c, again))
		require.NoError(t, restarted.ConsumeTraces(ctx, again))
		ids = append(ids, c.CaseID)
	}
	require.NoError(t, restarted.Shutdown(ctx))

	var named []any
	for _, l := range namedOn(t, stderr(), "sent again after a crash") {
		named = append(named, l...)
	}
	assert.ElementsMatch(t, ids, named, "every case left out is named")
	assert.Empty(t, logs.FilterMessageSnippet("sent again after a crash").All(), "not on the sampled logger")
}

// runsOf returns n cases of one fixture run, each under a case id of its own.
func runsOf(t *testing.T, n int) []*replaycase.Case {
	_, fixture := caseSpans(t, testfixtures.OTelEvents)
	cases := make([]*replaycase.Case, n)
	for i := range cases {
		c := *fixture[0]
		c.CaseID = replaycase.ID(c.Provenance.TraceID, fmt.Sprint(i))
		cases[i] = &c
	}
	return cases
}

// namedOn returns the case ids of each JSON line of out whose message holds msg.
func namedOn(t *testing.T, out, msg string) (lines [][]any) {
	for line := range strings.Lines(out) {
		var entry struct {
			Msg     string `json:"msg"`
			CaseIDs []any  `json:"case_ids"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && strings.Contains(entry.Msg, msg) {
			lines = append(lines, entry.CaseIDs)
		}
	}
	return lines
}

// captureStderr sends what is written to os.Stderr to a file until the returned function is
// called, which returns what was written.
func captureStderr(t *testing.T) func() string {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = f
	restore := func() { os.Stderr = saved }
	t.Cleanup(restore)
	return func() string {
		restore()
		data, err := os.ReadFile(f.Name())
		require.NoError(t, err)
		return string(data)
	}
}

// writtenBeforeTheKill writes cases with an exporter on cfg that then stops: the copies a
// collector killed before the processor released the cases' records leaves.
func writtenBeforeTheKill(t *testing.T, cfg *Config, cases []*replaycase.Case) {
	t.Helper()
	killed := newObserved(t, cfg)
	td := ptrace.NewTraces()
	for _, c := range cases {
		require.NoError(t, replaycase.Encode(c, td))
	}
	require.NoError(t, killed.ConsumeTraces(context.Background(), td))
	require.NoError(t, killed.Shutdown(context.Background()))
}
