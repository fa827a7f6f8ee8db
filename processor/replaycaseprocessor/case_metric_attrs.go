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
	return cachedOption(&closedCaseOptions, closedCaseKey{status, closedBy}, func() metric.AddOption {
		return metric.WithAttributes(attribute.String("status", string(status)), attribute.String("closed_by", string(closedBy)))
	})
}

func reasonAttrs(code string) metric.AddOption {
	return cachedOption(&reasonOptions, code, func() metric.AddOption {
		return metric.WithAttributes(attribute.String("reason", code))
	})
}

// cachedOption is cache's option for key, built by build the first time key is asked for.
func cachedOption[K comparable](cache *sync.Map, key K, build func() metric.AddOption) metric.AddOption {
	if o, ok := cache.Load(key); ok {
		return o.(metric.AddOption)
	}
	o, _ := cache.LoadOrStore(key, build())
	return o.(metric.AddOption)
}
