package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// writeAgain adds cases to the dataset at root as a later batch, whatever ids it holds (a
// re-delivered or re-driven run).
func writeAgain(t testing.TB, root string, cases []*replaycase.Case) {
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100_000, RowGroupRows: 5_000})
	require.NoError(t, err)
	_, err = w.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	_, err = w.Write(cases)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

// A case named by id is its latest row, as readDataset gives it, found from the index columns;
// a prefix that names several cases, none, or nothing at all is refused.
func TestLoadCaseFindsTheLatestRowByIndex(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.Traceloop)
	require.Len(t, cases, 2)
	again := *cases[0]
	again.Metadata = map[string]string{"run": "again"}
	writeAgain(t, root, []*replaycase.Case{&again})

	got, err := loadCase(cases[0].CaseID[:10], root)
	require.NoError(t, err)
	assert.Equal(t, "again", got.Metadata["run"], "the latest row")
	all, err := readDataset(root)
	require.NoError(t, err)
	require.Len(t, all, 2)
	for _, c := range all {
		byID, err := loadCase(c.CaseID, root)
		require.NoError(t, err)
		assert.Equal(t, c, byID, "the whole row readDataset takes")
	}

	for _, ref := range []string{"", "ffffffffff"} {
		_, err := loadCase(ref, root)
		assert.Error(t, err, "%q", ref)
	}
}

// benchDataset writes a dataset of 4 files × 500 cases (the OTel and Traceloop fixture runs,
// each model call offering 5 tools of its own) and returns its root and its cases.
func benchDataset(b *testing.B) (string, []*replaycase.Case) {
	root := filepath.Join(b.TempDir(), "data")
	base := testpipeline.Run(b, consumertest.NewNop(), testfixtures.OTelEvents, testfixtures.Traceloop)
	for i := range 4 {
		batch := testdataset.OfferingTools(base, 250, testdataset.DistinctTools(5))
		for _, c := range batch {
			c.CaseID = replaycase.ID(c.Provenance.TraceID, fmt.Sprint(i, "/", c.CaseID))
		}
		writeAgain(b, root, batch)
	}
	all, err := readDataset(root)
	require.NoError(b, err)
	require.Len(b, all, 2000)
	return root, all
}

// BenchmarkLoadCase: one case of a dataset of 4 files × 500 cases, found from the index columns
// and read with the file that holds it, against reading every row of the dataset (readDataset,
// what loadCase did before).
// Run: go test -run '^$' -bench LoadCase -benchmem -count 3 ./internal/cli/
func BenchmarkLoadCase(b *testing.B) {
	root, all := benchDataset(b)
	id := all[1234].CaseID
	b.Run("index-then-file", func(b *testing.B) {
		for b.Loop() {
			if c, err := loadCase(id, root); err != nil || c.CaseID != id {
				b.Fatal(err)
			}
		}
	})
	b.Run("all-rows", func(b *testing.B) {
		for b.Loop() {
			cases, err := readDataset(root)
			if err != nil {
				b.Fatal(err)
			}
			found := false
			for _, c := range cases {
				found = found || c.CaseID == id
			}
			if !found {
				b.Fatal("not found")
			}
		}
	})
}

// ls and ci select a case by its latest row: a case whose latest row the selection excludes is
// not listed from an older row it would include, and one whose latest row it includes is listed
// once, as that row.
func TestLsSelectsByTheLatestRow(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.Traceloop)
	require.Len(t, cases, 2)
	for _, c := range cases {
		require.Equal(t, replaycase.StatusAccepted, c.Status, c.CaseID)
	}
	again := *cases[0]
	again.Status, again.AgentName = replaycase.StatusQuarantined, "redriven"
	writeAgain(t, root, []*replaycase.Case{&again})

	code, out, _ := run(t, "ls", "--dataset", root, "--status", "accepted")
	require.Equal(t, ExitOK, code)
	assert.NotContains(t, out, cases[0].CaseID, "its latest row is quarantined")
	assert.Contains(t, out, cases[1].CaseID)
	code, out, _ = run(t, "ls", "--dataset", root, "--status", "quarantined")
	require.Equal(t, ExitOK, code)
	assert.Equal(t, 1, strings.Count(out, cases[0].CaseID), out)
	assert.Contains(t, out, "redriven", "the latest row's fields")
	require.NotEmpty(t, cases[0].AgentName)
	code, out, _ = run(t, "ls", "--dataset", root, "--agent", cases[0].AgentName, "--case", cases[0].CaseID)
	require.Equal(t, ExitOK, code)
	assert.NotContains(t, out, cases[0].CaseID, "the older row's agent no longer counts")
}

// BenchmarkLs: `reprise ls --case ID` on a dataset of 4 files × 500 cases, reading the rows a
// few at a time and keeping the line of the case selected, against holding every row and then
// selecting (what ls and ci did before 2026-12-05). peak-heap-MiB is the highest Go heap
// (runtime.MemStats.HeapAlloc) seen while the dataset is read, minus the heap before.
// Run: go test -run '^$' -bench 'Ls$' -benchmem -count 3 ./internal/cli/
func BenchmarkLs(b *testing.B) {
	root, all := benchDataset(b)
	sel := selection{status: "all", ids: []string{all[1234].CaseID}}
	var peak heapPeak
	b.Run("scan-and-select", func(b *testing.B) {
		peak.start()
		for b.Loop() {
			rows, err := scanDataset(root, func(c *replaycase.Case) (lsRow, bool) {
				peak.sample()
				return newLsRow(c), sel.keep(c)
			})
			if err != nil || len(rows) != 1 {
				b.Fatal(err, len(rows))
			}
		}
		peak.report(b)
	})
	b.Run("every-row-then-select", func(b *testing.B) {
		peak.start()
		for b.Loop() {
			rows, err := scanDataset(root, func(c *replaycase.Case) (*replaycase.Case, bool) {
				peak.sample()
				cc := *c
				return &cc, true
			})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, c := range rows {
				if sel.keep(c) {
					n++
				}
			}
			if n != 1 {
				b.Fatal(n)
			}
		}
		peak.report(b)
	})
}

// heapPeak follows the highest Go heap seen by sample since start, every 16th call (reading
// the heap's statistics stops the world).
type heapPeak struct {
	base, top uint64
	calls     int
}

func (h *heapPeak) start() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	*h = heapPeak{base: m.HeapAlloc, top: m.HeapAlloc}
}

func (h *heapPeak) sample() {
	if h.calls++; h.calls%16 != 0 {
		return
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.top = max(h.top, m.HeapAlloc)
}

func (h *heapPeak) report(b *testing.B) {
	b.ReportMetric(float64(h.top-h.base)/(1<<20), "peak-heap-MiB")
}

// A data file listed and gone before it is read (retention deleted its expired partition
// meanwhile; here a link to nothing, which the listing names and opening cannot find) is
// skipped: the commands read what is there. Any other error still fails them.
func TestAFileGoneSinceListedIsSkipped(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.Traceloop)
	require.Len(t, cases, 2)
	gone := filepath.Join(root, dataset.Cases, "dt=2020-01-01", "part-expired.zstd.parquet")
	require.NoError(t, os.MkdirAll(filepath.Dir(gone), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "deleted"), gone))

	all, err := readDataset(root)
	require.NoError(t, err)
	assert.Len(t, all, 2)
	got, err := loadCase(cases[1].CaseID, root)
	require.NoError(t, err)
	assert.Equal(t, cases[1].CaseID, got.CaseID)

	require.NoError(t, os.Remove(gone))
	require.NoError(t, os.WriteFile(gone, []byte("not parquet"), 0o644))
	_, err = readDataset(root)
	assert.ErrorContains(t, err, "part-expired")
	_, err = loadCase(cases[1].CaseID, root)
	assert.ErrorContains(t, err, "part-expired")
}
