package dataset

import (
	"fmt"
	"runtime"
	"testing"
	"time"
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
