package replaycaseprocessor

import (
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// selectErrorLog writes a select rule's evaluation errors to the drop logger at most once per
// interval per rule. Such a run is not lost (it is kept as a case whose selected_by names the
// rule, and counted in selection_errors), so one line per rule is enough to point at the bad
// rule; a rule that fails on every run would otherwise write a line per run. Each line carries
// the trace id of the run it is about and the errors held back since the rule's last line.
type selectErrorLog struct {
	interval time.Duration

	mu   sync.Mutex
	last map[string]time.Time // rule → when its last line was written
	held map[string]int       // rule → errors since then, not written
}

func newSelectErrorLog(interval time.Duration) *selectErrorLog {
	return &selectErrorLog{interval: interval, last: map[string]time.Time{}, held: map[string]int{}}
}

// failed records that rule f failed on the run of traceID at now, and writes a line when the
// rule's last one is older than the interval.
func (l *selectErrorLog) failed(log *zap.Logger, f ruleError, traceID pcommon.TraceID, now time.Time) {
	l.mu.Lock()
	last, seen := l.last[f.rule]
	if seen && now.Sub(last) < l.interval {
		l.held[f.rule]++
		l.mu.Unlock()
		return
	}
	held := l.held[f.rule]
	l.last[f.rule], l.held[f.rule] = now, 0
	l.mu.Unlock()
	if ce := log.Check(zapcore.WarnLevel, "select rule failed to evaluate; the run is kept as a case"); ce != nil {
		ce.Write(zap.String("rule", f.rule), zap.String("trace_id", traceIDText(traceID)),
			zap.String("selected_by", selectedByErrorPrefix+f.rule), zap.Error(f.err),
			zap.Int("errors_since_last_line", held), zap.Duration("interval", l.interval))
	}
}
