package replayparquetexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadatatest"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// config/local.yaml's chain, killed after the exporter wrote the cases and before the processor
// released their records: the restarted processor sends them again marked Resent, and the
// restarted exporter writes each once, counts the cases it did not write twice and names them
// at info level. The killed exporter's copy is in a segment the restarted one adopts, or was
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
			ctx := context.Background()
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
			again := ptrace.NewTraces()
			var ids []any
			for _, c := range cases {
				c.Resent = true
				require.NoError(t, replaycase.Encode(c, again))
				ids = append(ids, c.CaseID)
			}
			require.NoError(t, exp.ConsumeTraces(ctx, again))
			require.NoError(t, exp.Shutdown(ctx))

			byID := rowsByID(t, cfg.Directory)
			assert.Len(t, byID, len(cases))
			for _, c := range cases {
				assert.Equal(t, 1, byID[c.CaseID], "case %s: one row", c.CaseID)
			}
			assert.Len(t, readAll[dataset.StepRow](t, cfg.Directory, dataset.Steps), stepsOf(cases), "the steps of each case once")
			metadatatest.AssertEqualExporterReplayParquetCasesResent(t, exp.tel, []metricdata.DataPoint[int64]{{Value: int64(len(cases))}},
				metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
			logged := exp.logs.FilterMessageSnippet("sent again after a crash").All()
			require.Len(t, logged, 1)
			assert.ElementsMatch(t, ids, logged[0].ContextMap()["case_ids"])
		})
	}
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
