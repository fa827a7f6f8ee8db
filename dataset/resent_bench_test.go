package dataset

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

// BenchmarkAdoptedIDsAtTheBound reports the heap an adoption of maxAdoptedIDs case ids holds
// (held-MiB: live heap after a GC, with the adoption, less before it), the figure resent.go's
// comment gives for the bound:
//
//	go test -run '^$' -bench AdoptedIDsAtTheBound -benchtime 1x ./dataset/
func BenchmarkAdoptedIDsAtTheBound(b *testing.B) {
	rows := make([]caseIDRow, maxAdoptedIDs)
	for i := range rows {
		rows[i].CaseID = fmt.Sprintf("%032x", i)
	}
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a := &adoptedCaseIDs{}
		a.add(rows, time.Now())
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(a)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "held-MiB")
	}
}

// BenchmarkReadCaseIDs reads what a writer restarted beside a copy reads to find cases sent
// again (readPublished): the ids of files of 16 cases, as a copy with batch_size 16 publishes
// them, column by column (readCaseIDs) and, for comparison, with a row reader of caseIDRow,
// which it used before (it produced a null for each of the other columns of every row).
// Per op: the 100 files.
//
//	go test -run '^$' -bench ReadCaseIDs -benchmem -benchtime 5x ./dataset/
func BenchmarkReadCaseIDs(b *testing.B) {
	dir := b.TempDir()
	w, err := NewWriter(WriterConfig{Root: filepath.Join(dir, "data"), Staging: filepath.Join(dir, "data.staging"), Compression: "zstd", MaxRowsPerFile: 1000, RowGroupRows: 1000})
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	for f := range 100 {
		cases := make([]*replaycase.Case, 16)
		for i := range cases {
			n := f*16 + i
			cases[i] = &replaycase.Case{
				CaseID: fmt.Sprintf("%032x", n+1), Status: replaycase.StatusAccepted, StartTime: time.Date(2026, 12, 7, 10, 0, 0, n, time.UTC),
				Metadata: map[string]string{MetaRedrivenFrom: fmt.Sprintf("cases/dt=2026-12-07/f.parquet#%d", n)},
			}
		}
		res, err := w.Write(cases)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range res.Files {
			if p.Dataset == Cases {
				paths = append(paths, p.Path)
			}
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	for _, r := range []struct {
		name string
		read func(string) ([]caseIDRow, error)
	}{
		{"columns", readCaseIDs},
		{"rows", func(p string) ([]caseIDRow, error) { return readAll[caseIDRow](p, nil) }},
	} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, p := range paths {
					rows, err := r.read(p)
					if err != nil {
						b.Fatal(err)
					}
					n += len(rows)
				}
				if n != 1600 {
					b.Fatalf("read %d rows of 1,600", n)
				}
			}
		})
	}
}
