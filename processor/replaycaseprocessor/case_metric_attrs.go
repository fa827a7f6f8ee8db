package replaycaseprocessor

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/reprise-dev/reprise/replaycase"
)

// The attributes of the per-case metrics, built once per value: metric.WithAttributes sorts and
// copies its attributes into a new set on every call, and these are recorded for every case
// closed. Every value comes from the processor's own constants (statuses, close causes, reason
// codes), never from the telemetry, so the caches stay small.
var (
	closedCaseOptions sync.Map // closedCaseKey -> metric.AddOption
	reasonOptions     sync.Map // reason code -> metric.AddOption
)

type closedCaseKey struct {
	status   replaycase.Status
	closedBy replaycase.CloseCause
}

func closedCaseAttrs(status replaycase.Status, closedBy replaycase.CloseCause) metric.AddOption {
	k := closedCaseKey{status, closedBy}
	if o, ok := closedCaseOptions.Load(k); ok {
		return o.(metric.AddOption)
	}
	o, _ := closedCaseOptions.LoadOrStore(k, metric.WithAttributes(
		attribute.String("status", string(status)), attribute.String("closed_by", string(closedBy))))
	return o.(metric.AddOption)
}

func reasonAttrs(code string) metric.AddOption {
	if o, ok := reasonOptions.Load(code); ok {
		return o.(metric.AddOption)
	}
	o, _ := reasonOptions.LoadOrStore(code, metric.WithAttributes(attribute.String("reason", code)))
	return o.(metric.AddOption)
}
