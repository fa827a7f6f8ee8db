package replaycaseprocessor

import (
	"os"

	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newDropLogger returns the logger for dropped cases and events. The collector's logger samples
// repeated messages (by default the first 10 a second, then 1 in 100), which hid most dropped
// case ids under load; every drop must be findable by its id, so this logger has its own core
// without a sampler. It writes JSON to stderr at warn level and above, like the collector's
// production logger.
func newDropLogger(set processor.Settings) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(os.Stderr), zapcore.WarnLevel)
	return zap.New(core).With(zap.String("otelcol.component.id", set.ID.String()), zap.String("otelcol.component.kind", "processor"))
}
