package replaycaseprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadata"
)

// The span ids and event keys of closed cases (closed_spans.go, and on disk closed_marks.go)
// are what makes an item sent again after its case closed a duplicate; once forgotten, it is a
// late_spans fragment. So an operator sees how many the memory holds (remembered_ids) and every
// id forgotten while its close is still remembered (forgotten_ids), by why: the cure for both
// is a larger limits.max_buffered_bytes. The ids of a close that leaves the window of
// max_open_traces closes go with the close: that is the window, not a forgetting of ids, and
// only remembered_ids goes down.

// idCount is how many span ids and event keys a close holds.
type idCount struct{ spans, events int64 }

func idCountOf(spans []pcommon.SpanID, events []eventKey) idCount {
	return idCount{int64(len(spans)), int64(len(events))}
}

// bytes is what the ids take in a closed mark's value.
func (n idCount) bytes() int64 { return n.spans*memClosedID + n.events*memClosedEventKey }

// idsBySignal are the attribute options of the ids metrics for span ids (traces) and event keys
// (logs), built once: they are added on every close. Slices, passed on as they are, so that an
// Add allocates no variadic slice of its own.
type idsBySignal struct{ spans, events []metric.AddOption }

func newIDsBySignal(attrs ...attribute.KeyValue) idsBySignal {
	with := func(signal string) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(append([]attribute.KeyValue{attribute.String("signal", signal)}, attrs...)...))}
	}
	return idsBySignal{spans: with("traces"), events: with("logs")}
}

// newForgetReason is the attribute options of forgotten_ids for reason.
func newForgetReason(reason string) *idsBySignal {
	s := newIDsBySignal(attribute.String("reason", reason))
	return &s
}

var (
	rememberedIDsAttrs = newIDsBySignal()
	// forgottenForPressure: open cases and ids together reached limits.max_buffered_bytes, and
	// the ids gave way (withIDs).
	forgottenForPressure = newForgetReason("memory_pressure")
	// forgottenForBudget: the ids in memory reached their share of it (closedIDsShare).
	forgottenForBudget = newForgetReason("memory_budget")
	// forgottenOnDisk: the ids of the closed marks reached that share on disk (strip); the
	// memory may still hold them, until a restart.
	forgottenOnDisk = newForgetReason("storage_budget")
)

// idsTelemetry reports to the ids metrics; the zero value reports nothing (unit tests of
// recentTraces build one without a processor).
type idsTelemetry struct{ tel *metadata.TelemetryBuilder }

// remembered adds n to remembered_ids: sign 1 when a close is remembered, -1 when its ids go.
func (t idsTelemetry) remembered(n idCount, sign int64) {
	if t.tel != nil {
		addIDs(t.tel.ProcessorReplayCaseRememberedIds, n, sign, rememberedIDsAttrs)
	}
}

// forgotten counts n in forgotten_ids for reason; a nil reason (a close left the window)
// counts nothing.
func (t idsTelemetry) forgotten(n idCount, reason *idsBySignal) {
	if t.tel != nil && reason != nil {
		addIDs(t.tel.ProcessorReplayCaseForgottenIds, n, 1, *reason)
	}
}

// int64Adder is an Int64Counter or an Int64UpDownCounter.
type int64Adder interface {
	Add(ctx context.Context, incr int64, options ...metric.AddOption)
}

// addIDs adds n times sign to m, span ids and event keys each with their signal; a signal
// with no ids adds no point.
func addIDs(m int64Adder, n idCount, sign int64, attrs idsBySignal) {
	if n.spans > 0 {
		m.Add(context.Background(), sign*n.spans, attrs.spans...)
	}
	if n.events > 0 {
		m.Add(context.Background(), sign*n.events, attrs.events...)
	}
}
