// Package pdatawalk walks the resource / scope / item nesting of OTLP traces and logs once, so
// that code reading spans or log records says what it does with each item instead of
// repeating three nested loops.
package pdatawalk

import (
	"iter"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span is one span with the resource and scope it was recorded under. ResourceIndex and
// ScopeIndex locate them in the walked traces, so a caller that copies spans elsewhere can copy
// each resource and scope once.
type Span struct {
	Resource      ptrace.ResourceSpans
	Scope         ptrace.ScopeSpans
	Span          ptrace.Span
	ResourceIndex int
	ScopeIndex    int
}

// Spans yields every span of td in order. Breaking out of the loop stops the walk.
func Spans(td ptrace.Traces) iter.Seq[Span] {
	return func(yield func(Span) bool) {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					if !yield(Span{Resource: rs, Scope: ss, Span: ss.Spans().At(k), ResourceIndex: i, ScopeIndex: j}) {
						return
					}
				}
			}
		}
	}
}

// LogRecord is one log record with the resource and scope it was recorded under, located as
// in Span.
type LogRecord struct {
	Resource      plog.ResourceLogs
	Scope         plog.ScopeLogs
	Record        plog.LogRecord
	ResourceIndex int
	ScopeIndex    int
}

// LogRecords yields every log record of ld in order. Breaking out of the loop stops the walk.
func LogRecords(ld plog.Logs) iter.Seq[LogRecord] {
	return func(yield func(LogRecord) bool) {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					if !yield(LogRecord{Resource: rl, Scope: sl, Record: sl.LogRecords().At(k), ResourceIndex: i, ScopeIndex: j}) {
						return
					}
				}
			}
		}
	}
}

// RemoveLogRecordsIf removes the log records for which remove returns true, then the scopes and
// resources left without records, so that what remains is valid to pass on. Every record is
// visited once, in order.
func RemoveLogRecordsIf(ld plog.Logs, remove func(LogRecord) bool) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
				return remove(LogRecord{Resource: rl, Scope: sl, Record: lr, ResourceIndex: i, ScopeIndex: j})
			})
		}
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool { return sl.LogRecords().Len() == 0 })
	}
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool { return rl.ScopeLogs().Len() == 0 })
}
