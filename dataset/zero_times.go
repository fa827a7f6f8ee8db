package dataset

import (
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/replaycase"
)

// Zero times read back as zero.
//
// A case or step without a start or end time (OTLP time 0, or one past 2262, which normalize
// reports and leaves unset) has the zero time.Time, which start_time and end_time
// (timestamp(microsecond), required) store as 0001-01-01T00:00:00Z: DuckDB, Spark, pyarrow,
// pandas and Polars read that back. parquet-go v0.32 converts a timestamp to a time.Time through int64 nanoseconds
// (time.Unix(0, µs*1000)), which wraps outside the years 1677 to 2262: it reads the zero time as
// 1754-08-30T22:43:41.128654848Z, a time no OTLP span can have (the other µs values that wrap to
// it are 73,000 years away). The readers here turn that value back into the zero time, so that
// a case read back (served, re-driven) has no start time again rather than one in 1754. Other
// times outside those years (only in rows another tool wrote) are still misread by parquet-go.
var wrappedZeroTime = time.Unix(0, time.Time{}.UnixMicro()*1000) // wraps, as parquet-go's does

// zeroBack turns t back into the zero time when it is the zero time parquet-go misread.
func zeroBack(t *time.Time) {
	if t.Equal(wrappedZeroTime) {
		*t = time.Time{}
	}
}

func stepTimesBack(s *replaycase.Step) {
	zeroBack(&s.StartTime)
	zeroBack(&s.EndTime)
}

// restoreRows gives rows decoded from pf back what the file's encoding or parquet-go changed:
// the span id copies stored once (fillRowsSpanIDs) and the zero times (zeroTimesBack). Every
// reader of whole rows calls it once after decoding.
func restoreRows[T any](pf *parquet.File, rows []T) {
	fillRowsSpanIDs(pf, rows)
	zeroTimesBack(rows)
}

// zeroTimesBack puts back the zero times of the rows read into rows, a slice of one of the row
// types the readers decode (other types are left as they are).
func zeroTimesBack[T any](rows []T) {
	for i := range rows {
		zeroTimesBackOf(&rows[i])
	}
}

// zeroTimesBackOf is zeroTimesBack for one row.
func zeroTimesBackOf(row any) {
	switch r := row.(type) {
	case *CaseRow:
		zeroBack(&r.StartTime)
		zeroBack(&r.EndTime)
		for i := range r.Steps {
			stepTimesBack(&r.Steps[i])
		}
	case *StepRow:
		stepTimesBack(&r.Step)
	case *CaseSummary:
		zeroBack(&r.StartTime)
		zeroBack(&r.EndTime)
	case *indexRow:
		zeroBack(&r.StartTime)
		zeroBack(&r.EndTime)
	}
}
