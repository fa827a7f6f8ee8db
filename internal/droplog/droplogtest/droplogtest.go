// Package droplogtest observes the lines a component logs, on the collector's sampled logger and
// on its unsampled logger of drops (internal/droplog), in one place.
package droplogtest

import (
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// The collector's default sampling of its logger (go.opentelemetry.io/collector/service
// v0.165.0, telemetry/otelconftelemetry/factory.go): of each message, the first 10 a tick of
// 10 s, then every 100th.
const (
	collectorTick       = 10 * time.Second
	collectorInitial    = 10
	collectorThereafter = 100
)

// Burst is more lines of one message than the collector's sampled logger lets through in a
// tick: it keeps 11 of them.
const Burst = 150

// Sampled wraps core in the sampler of the collector's default telemetry config, as the
// collector wraps the logger it gives components.
func Sampled(core zapcore.Core) zapcore.Core {
	return zapcore.NewSamplerWithOptions(core, collectorTick, collectorInitial, collectorThereafter)
}

// Observed returns two loggers that write into one observer of every level: collector, sampled
// as the collector's logger is (for a component's settings), and drops, unsampled as
// droplog.New is (for the component's drop logger).
func Observed() (collector, drops *zap.Logger, logs *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(Sampled(core)), zap.New(core), logs
}

// Named returns the ids a message names, in the order logged: the values of field (a string,
// or a list of strings as zap.Strings logs it) on every line whose message is msg.
func Named(logs *observer.ObservedLogs, msg, field string) []string {
	var ids []string
	for _, e := range logs.FilterMessage(msg).All() {
		switch v := e.ContextMap()[field].(type) {
		case string:
			ids = append(ids, v)
		case []any:
			for _, id := range v {
				if s, ok := id.(string); ok {
					ids = append(ids, s)
				}
			}
		}
	}
	return ids
}
