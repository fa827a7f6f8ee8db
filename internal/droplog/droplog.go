// Package droplog gives a component the logger on which it names every case it drops or leaves
// out.
package droplog

import (
	"os"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New returns the logger for the cases and events a component (kind "processor", "exporter",
// "receiver") drops or leaves out. The collector's logger samples repeated messages (by default
// the first 10 of a message per 10 s, then 1 in 100: service/telemetry/otelconftelemetry
// v0.165.0), which hid most of their ids under load; every one must be findable by its id, so
// this logger has its own core without a sampler. It writes JSON to stderr at warn level and
// above, like the collector's production logger.
func New(id component.ID, kind string) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(os.Stderr), zapcore.WarnLevel)
	return zap.New(core).With(zap.String("otelcol.component.id", id.String()), zap.String("otelcol.component.kind", kind))
}
