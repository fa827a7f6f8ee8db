package replaycaseprocessor

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottllog"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/ottlfuncs"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// SelectConfig chooses which runs become cases. A run is selected when any rule matches any of
// its spans or joined log events; the runs no rule selects are sampled at SampleRate.
type SelectConfig struct {
	// Rules maps a rule name to an OTTL condition. A condition that uses log.* paths is
	// evaluated on each GenAI log event joined into the run (log.*, resource.*, scope.*); any
	// other on each span (span.*, resource.*, scope.*, and IsRootSpan()). The case records the
	// name of the rule that selected it in selected_by; when several match, the first in name
	// order. Default none.
	Rules map[string]string `mapstructure:"rules"`
	// SampleRate is the fraction, 0 to 1, of the runs no rule selects that still become cases
	// (selected_by "sample"). The decision is a hash of the trace id, so every collector and
	// every re-drive of a run decides the same. Default 0.
	SampleRate float64 `mapstructure:"sample_rate"`
	// Unselected says what happens to a run that is not selected: "drop" (default; counted by
	// reason) or "pass" (its spans and events are passed on unchanged, as for a trace without
	// GenAI telemetry, and counted).
	Unselected string `mapstructure:"unselected"`
}

const (
	unselectedDrop = "drop"
	unselectedPass = "pass"

	// selectedBySample is the selected_by value of a run kept by the sample rate.
	selectedBySample = "sample"
	// selectedBySpanLimit is the selected_by value of a part of a run cut at
	// limits.max_spans_per_trace that neither a rule nor the sample kept: a later part may match.
	selectedBySpanLimit = "span_limit"
	// selectedByErrorPrefix starts the selected_by value of a run kept because a rule failed to
	// evaluate on it; the rule's name follows.
	selectedByErrorPrefix = "error:"
	// notSelectedReason is the reason attribute of runs neither a rule nor the sample kept.
	notSelectedReason = "no_rule_matched_not_sampled"
)

func (s *SelectConfig) validate() []error {
	var errs []error
	if math.IsNaN(s.SampleRate) || s.SampleRate < 0 || s.SampleRate > 1 {
		errs = append(errs, fmt.Errorf("select.sample_rate must be between 0 and 1, got %v", s.SampleRate))
	}
	switch s.Unselected {
	case "", unselectedDrop, unselectedPass: // "" is the default, drop
	default:
		errs = append(errs, fmt.Errorf("select.unselected must be %q or %q, got %q", unselectedDrop, unselectedPass, s.Unselected))
	}
	for name, cond := range s.Rules {
		if name == "" || cond == "" {
			errs = append(errs, fmt.Errorf("select.rules: entry %q needs a name and an OTTL condition", name))
		}
	}
	// Parsed here as well as at creation, so that a bad rule is reported with the other
	// mistakes; parsing needs no telemetry beyond a logger.
	if _, err := newSelector(component.TelemetrySettings{Logger: zap.NewNop()}, s, 1); err != nil {
		errs = append(errs, err)
	}
	if len(s.Rules) == 0 && s.SampleRate == 0 {
		errs = append(errs, errors.New("select: no rules and sample_rate 0 would select no run; remove select to keep every run"))
	}
	return errs
}

// selector decides, once per closed trace, whether the run becomes a case and why.
type selector struct {
	names     []string // rule names in order; spanRules / logRules hold nil where the rule is of the other kind
	spanRules []*ottl.Condition[*ottlspan.TransformContext]
	logRules  []*ottl.Condition[*ottllog.TransformContext]
	threshold uint64 // a trace whose hash is below it is sampled
	sampleAll bool   // sample_rate 1: the threshold cannot express it in a uint64
	recent    *recentSelections
	errLog    *selectErrorLog
}

// recentSelections remembers why the last n selected traces were selected. Spans that arrive
// after a trace's case closed form a fragment case of their own; the rules see only the
// fragment's spans (an error_root rule, say, no longer sees the root), so a fragment of a
// selected run is kept for the reason its run was.
type recentSelections struct {
	mu   sync.Mutex
	n    int // the ring's size once full; it grows as selections come, not allocated up front
	ring []pcommon.TraceID
	next int
	by   map[pcommon.TraceID]string
}

// newRecentSelections allocates nothing for n: n is limits.max_open_traces, whatever the user
// wrote, and a large one made start-up allocate (and run out of memory) before any data came.
func newRecentSelections(n int) *recentSelections {
	return &recentSelections{n: n, by: map[pcommon.TraceID]string{}}
}

func (r *recentSelections) add(id pcommon.TraceID, by string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.by[id]; ok {
		return
	}
	if len(r.ring) < r.n {
		r.ring = append(r.ring, id)
	} else {
		delete(r.by, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % len(r.ring)
	}
	r.by[id] = by
}

func (r *recentSelections) get(id pcommon.TraceID) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	by, ok := r.by[id]
	return by, ok
}

// newSelector parses the rules. A nil config gives a nil selector, which selects every run.
// remember is how many selected traces it remembers for their later fragments.
func newSelector(set component.TelemetrySettings, cfg *SelectConfig, remember int) (*selector, error) {
	if cfg == nil {
		return nil, nil
	}
	spanParser, err := newSpanParser(set)
	if err != nil {
		return nil, err
	}
	logParser, err := ottllog.NewParser(ottlfuncs.StandardConverters[*ottllog.TransformContext](), set, ottllog.EnablePathContextNames())
	if err != nil {
		return nil, err
	}
	s := &selector{recent: newRecentSelections(max(remember, 1)), errLog: newSelectErrorLog(time.Minute)}
	// Rates just under 1 round up to 2^64, which a uint64 cannot hold.
	if t := cfg.SampleRate * 0x1p64; t >= 0x1p64 {
		s.sampleAll = true
	} else {
		s.threshold = uint64(t)
	}
	for name := range cfg.Rules {
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	var errs []error
	for _, name := range s.names {
		// A condition is a span rule when the span parser takes it; log.* paths only parse in the
		// log context, so a log rule falls through to it.
		sc, spanErr := spanParser.ParseCondition(cfg.Rules[name])
		if spanErr == nil {
			s.spanRules, s.logRules = append(s.spanRules, sc), append(s.logRules, nil)
			continue
		}
		lc, logErr := logParser.ParseCondition(cfg.Rules[name])
		if logErr == nil {
			s.spanRules, s.logRules = append(s.spanRules, nil), append(s.logRules, lc)
			continue
		}
		errs = append(errs, fmt.Errorf("select.rules.%s: not a span condition (%w) nor a log condition (%w)", name, spanErr, logErr))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// decide returns the name of the first rule (in name order) that matches a span or an event of
// the run; else, when a rule failed to evaluate on an item (ParseJSON of text that is not JSON,
// say), "error:" and the first such rule's name: that rule might have matched, and keeping a run
// that does not matter costs a row while dropping one that does loses it for good; else "sample"
// when the trace id falls in the sample; else "". failed holds each rule evaluated that failed,
// with its first error, whatever the outcome (rules after the one that matched are not evaluated).
func (s *selector) decide(ctx context.Context, spans ptrace.Traces, events plog.Logs, traceID pcommon.TraceID) (by string, failed []ruleError) {
	for i, name := range s.names {
		var matched bool
		var err error
		if s.spanRules[i] != nil {
			matched, err = anySpan(ctx, spans, s.spanRules[i])
		} else {
			matched, err = anyEvent(ctx, events, s.logRules[i])
		}
		if err != nil {
			failed = append(failed, ruleError{rule: name, err: err})
		}
		if matched {
			return name, failed
		}
	}
	if len(failed) > 0 {
		return selectedByErrorPrefix + failed[0].rule, failed
	}
	if s.sampled(traceID) {
		return selectedBySample, nil
	}
	return "", nil
}

// ruleError is a select rule whose condition failed to evaluate on a run, with the first error.
type ruleError struct {
	rule string
	err  error
}

// sampled hashes the whole trace id (FNV-1a), not only its low bits: trace ids that are not
// random in every byte (X-Ray puts a timestamp first, test generators count) still spread.
func (s *selector) sampled(traceID pcommon.TraceID) bool {
	if s.sampleAll {
		return true
	}
	h := fnv.New64a()
	_, _ = h.Write(traceID[:])
	return h.Sum64() < s.threshold
}

// selectRun decides whether a closed run becomes a case: by is the rule name, "error:<rule>",
// "sample" or "span_limit", or "" when it is not selected. Without a select config every run is
// selected (by "").
func (p *caseProcessor) selectRun(ctx context.Context, b *traceBuffer, run runTelemetry, cause replaycase.CloseCause) (by string, selected bool) {
	if p.selector == nil {
		return "", true
	}
	cutRun := cause == replaycase.ClosedSpanLimit // its later spans form the next part
	if b.fragment > 0 {
		by, ok := p.selector.recent.get(b.id)
		if ok && by != selectedBySpanLimit {
			// Counted like any selected run, so that selected_runs equals the cases closed.
			p.telemetry.ProcessorReplayCaseSelectedRuns.Add(ctx, 1, metric.WithAttributes(attribute.String("selected_by", by)))
			return by, true
		}
		// A part after one kept only because the run was cut is kept too, under the rule that
		// matches it when one does.
		cutRun = cutRun || ok
	}
	by, failed := p.selector.decide(ctx, run.spans, run.events, b.id)
	for _, f := range failed {
		p.telemetry.ProcessorReplayCaseSelectionErrors.Add(ctx, 1, metric.WithAttributes(attribute.String("rule", f.rule)))
		p.selector.errLog.failed(p.dropLog, f, b.id, p.now())
	}
	if by == "" && cutRun {
		// The rules saw part of the run: a span in a later part may match, and that part
		// cannot bring this one back.
		by = selectedBySpanLimit
	}
	if by == "" {
		return "", false
	}
	p.selector.recent.add(b.id, by)
	p.telemetry.ProcessorReplayCaseSelectedRuns.Add(ctx, 1, metric.WithAttributes(attribute.String("selected_by", by)))
	return by, true
}

// unselected counts a run that is not selected and, for "pass", moves its telemetry into the
// batch unchanged. A dropped run is logged at debug level only: dropping it is the configured
// policy, not a loss, and at a 1 % sample it is nearly every run.
func (p *caseProcessor) unselected(ctx context.Context, cl closing, run runTelemetry, b *batch) {
	action := "dropped"
	if p.cfg.Select.Unselected == unselectedPass {
		action = "passed"
		run.spans.ResourceSpans().MoveAndAppendTo(b.traces.ResourceSpans())
		run.events.ResourceLogs().MoveAndAppendTo(b.logs.ResourceLogs())
		b.passed = append(b.passed, cl.buf.id.String())
	}
	p.telemetry.ProcessorReplayCaseUnselectedRuns.Add(ctx, 1, metric.WithAttributes(
		attribute.String("reason", notSelectedReason), attribute.String("action", action)))
	p.logger.Debug("run not selected", zap.String("trace_id", traceIDText(cl.buf.id)), zap.String("action", action))
}

// anySpan tells whether cond holds on a span of td.
func anySpan(ctx context.Context, td ptrace.Traces, cond *ottl.Condition[*ottlspan.TransformContext]) (bool, error) {
	return anyMatch(ctx, cond, func(yield func(*ottlspan.TransformContext) bool) {
		for s := range pdatawalk.Spans(td) {
			if !yield(ottlspan.NewTransformContext(s.Resource, s.Scope, s.Span)) {
				return
			}
		}
	})
}

// anyEvent tells whether cond holds on one of the run's joined log events.
func anyEvent(ctx context.Context, ld plog.Logs, cond *ottl.Condition[*ottllog.TransformContext]) (bool, error) {
	return anyMatch(ctx, cond, func(yield func(*ottllog.TransformContext) bool) {
		for r := range pdatawalk.LogRecords(ld) {
			if !yield(ottllog.NewTransformContext(r.Resource, r.Scope, r.Record)) {
				return
			}
		}
	})
}

// anyMatch tells whether cond holds in one of the transform contexts. It goes on past a
// context the condition fails to evaluate on, since a later one may match, and returns the
// first such error.
func anyMatch[K interface{ Close() }](ctx context.Context, cond *ottl.Condition[K], contexts iter.Seq[K]) (bool, error) {
	var first error
	for tctx := range contexts {
		ok, err := cond.Eval(ctx, tctx)
		tctx.Close()
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		if ok {
			return true, first
		}
	}
	return false, first
}
