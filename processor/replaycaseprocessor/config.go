package replaycaseprocessor

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/reprise-dev/reprise/internal/confdur"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/scrub"
)

// Config of the replay_case processor. Every field is optional; the defaults are in
// createDefaultConfig and the README.
type Config struct {
	// RootGracePeriod is how long a case stays open after its root span has arrived and nothing
	// else has arrived for it, to collect late children and log events. Default 2s.
	RootGracePeriod time.Duration `mapstructure:"root_grace_period"`
	// IdleTimeout closes a case whose root span never arrived once nothing has arrived for it for
	// this long. Default 30s.
	IdleTimeout time.Duration `mapstructure:"idle_timeout"`
	// MaxAge closes a case this long after its first span or event arrived, whatever else
	// happens. Default 5m.
	MaxAge time.Duration `mapstructure:"max_age"`

	// Limits bound the memory the processor uses.
	Limits LimitsConfig `mapstructure:"limits"`

	// Evidence is the policy that decides which missing evidence quarantines a case.
	Evidence EvidenceConfig `mapstructure:"evidence"`

	// Metadata maps a label name to an OTTL value expression over spans (span.*, resource.*,
	// scope.* paths). It is evaluated on the root span first, then on every other span in
	// order; the first non-empty value becomes the case's metadata[name].
	Metadata map[string]string `mapstructure:"metadata"`
	// Assertions maps an assertion name to an OTTL value expression, evaluated like Metadata,
	// e.g. `expected_answer: span.attributes["app.expected"]`.
	Assertions map[string]string `mapstructure:"assertions"`

	// Select chooses which runs become cases (select.go): OTTL rules over the run's spans and
	// joined log events, a deterministic sample of the rest, and what happens to the others.
	// Default none: every run becomes a case.
	Select *SelectConfig `mapstructure:"select"`

	// RawSpans says which cases keep the original spans and events (OTLP protobuf) for
	// re-driving: "quarantined" (default), "all" or "none".
	RawSpans string `mapstructure:"raw_spans"`

	// ForwardJoinedLogs passes GenAI log events on in the logs pipeline after joining them into
	// a case. Default false: their content is in the case. Other log records always pass.
	ForwardJoinedLogs bool `mapstructure:"forward_joined_logs"`

	// TrustedUpstream lets spans that already carry replay.case_id (case spans written by a
	// replay_case processor in an upstream Reprise tier, or re-driven by the replay_parquet
	// receiver) pass through unchanged. Default false: the replay.* namespace is reserved for
	// case spans, so every replay.* attribute on incoming telemetry is removed (and counted)
	// before anything else reads it; otherwise any client could plant or overwrite a case.
	// Turn it on only on a receiver that authenticates its senders.
	TrustedUpstream bool `mapstructure:"trusted_upstream"`

	// EmitBatchSize is how many closed cases are built and sent downstream in one request when
	// limits close cases while data arrives. Cases closed by the timers are sent at every sweep,
	// whatever their number. Default 256.
	EmitBatchSize int `mapstructure:"emit_batch_size"`

	// Storage is the ID of a storage extension (file_storage) to which every accepted span and
	// log event is written before it is acknowledged, and from which open cases are restored on
	// start. Default none: buffered telemetry is lost when the process dies.
	Storage *component.ID `mapstructure:"storage"`

	// KeepOpenOnShutdown leaves the cases still open at shutdown in storage, restored and
	// continued on the next start, instead of closing them (closed_by shutdown). For a tier that
	// consumes Kafka (docs/scale-out.md): its partitions come back to the restarted collector,
	// and closing the open cases at a rolling restart split every run in flight into two rows.
	// Requires storage. Default false.
	KeepOpenOnShutdown bool `mapstructure:"keep_open_on_shutdown"`

	// Scrub is the secrets and personal-data policy applied to everything the processor emits
	// (cases, raw spans, passed-through spans and logs). On by default; see package scrub.
	Scrub scrub.Config `mapstructure:"scrub"`

	// Pricing is the price table and the per-case budget (cost.go, docs/cost.md).
	Pricing PricingConfig `mapstructure:"pricing"`
}

// LimitsConfig bounds memory. When a limit is hit the oldest open case is closed early and
// quarantined with reason "evicted" (or "span_limit" for the case that grew too large).
type LimitsConfig struct {
	// MaxOpenTraces is the most traces buffered at once. Default 10000.
	MaxOpenTraces int `mapstructure:"max_open_traces"`
	// MaxSpansPerTrace is the most spans one case holds. The spans past it form further
	// cases of the same trace (fragments, reason late_spans), each again at most this size.
	// Default 5000.
	MaxSpansPerTrace int `mapstructure:"max_spans_per_trace"`
	// MaxEventsPerTrace is the most GenAI log events one case holds; later events of the trace
	// are dropped, counted and logged, and the case is quarantined with reason event_limit.
	// Kept apart from MaxSpansPerTrace so that events cannot push real spans out. Default 5000.
	MaxEventsPerTrace int `mapstructure:"max_events_per_trace"`
	// MaxBufferedBytes bounds the memory of open cases, closed cases not yet sent and cases the
	// next consumer refused: an open or closed-unbuilt case counts its compressed OTLP encoding
	// and bookkeeping, a case being built or refused its pdata estimate. Open cases
	// are closed oldest first to stay under it; while closed cases cannot be sent, new data is
	// refused with a retryable error. Default 256 MiB. The ids that the last closes remember
	// (closed_spans.go) take at most a sixteenth of it, within it: they are forgotten, oldest
	// first, before an open case is closed or a request refused for memory.
	MaxBufferedBytes int64 `mapstructure:"max_buffered_bytes"`
}

// EvidenceConfig lists the evidence a case must have to be accepted.
type EvidenceConfig struct {
	// Require names the checks that quarantine a case when they fail. Default: all of them.
	Require []string `mapstructure:"require"`
}

// evidenceChecks maps a policy name to the reason codes it turns into quarantine.
var evidenceChecks = map[string][]string{
	"root_span":         {replaycase.ReasonNoRootSpan},
	"llm_steps":         {replaycase.ReasonNoLLMSteps},
	"input_messages":    {replaycase.ReasonNoInputMessages},
	"model_output":      {replaycase.ReasonNoModelOutput},
	"model_name":        {replaycase.ReasonNoModelName},
	"tool_results":      {replaycase.ReasonToolCallWithoutResult},
	"embeddings":        {replaycase.ReasonEmbeddingsNotRecorded},
	"parseable_content": {replaycase.ReasonUnparseableContent, replaycase.ReasonTruncatedContent},
	"inline_content":    {replaycase.ReasonContentRef},
	"valid_values":      {replaycase.ReasonInvalidUsage, replaycase.ReasonInvalidParameter, replaycase.ReasonInvalidTimestamp, replaycase.ReasonEndBeforeStart},
	// Two conventions on one span recorded different values: the case holds one of two.
	"consistent_conventions": {replaycase.ReasonConflictingConventions},
}

func allChecks() []string {
	names := make([]string, 0, len(evidenceChecks))
	for n := range evidenceChecks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var _ confmap.Validator = (*Config)(nil)

// Validate rejects settings the processor cannot honour. OTTL expressions are checked when the
// processor is created, so `reprise validate` reports them too.
func (c *Config) Validate() error {
	var errs []error
	positive := func(name string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		} else if err := confdur.Unitless(name, d, "s"); err != nil { // REPRISE_ROOT_GRACE=15 closed every case at once
			errs = append(errs, err)
		}
	}
	positive("root_grace_period", c.RootGracePeriod)
	positive("idle_timeout", c.IdleTimeout)
	positive("max_age", c.MaxAge)
	if c.MaxAge > 0 && c.MaxAge < c.IdleTimeout {
		errs = append(errs, fmt.Errorf("max_age (%s) must not be shorter than idle_timeout (%s)", c.MaxAge, c.IdleTimeout))
	}
	// The sweep closes a case idle for idle_timeout whether its root arrived or not, so a longer
	// grace period would never be waited for (the case would close as idle_timeout instead).
	if c.IdleTimeout > 0 && c.RootGracePeriod > c.IdleTimeout {
		errs = append(errs, fmt.Errorf("root_grace_period (%s) must not be longer than idle_timeout (%s): a case closes once nothing arrived for idle_timeout, root or not; raise idle_timeout with it", c.RootGracePeriod, c.IdleTimeout))
	}
	if c.Limits.MaxOpenTraces <= 0 {
		errs = append(errs, fmt.Errorf("limits.max_open_traces must be positive, got %d", c.Limits.MaxOpenTraces))
	}
	if c.Limits.MaxSpansPerTrace <= 0 {
		errs = append(errs, fmt.Errorf("limits.max_spans_per_trace must be positive, got %d", c.Limits.MaxSpansPerTrace))
	}
	if c.Limits.MaxEventsPerTrace <= 0 {
		errs = append(errs, fmt.Errorf("limits.max_events_per_trace must be positive, got %d", c.Limits.MaxEventsPerTrace))
	}
	if c.EmitBatchSize <= 0 {
		errs = append(errs, fmt.Errorf("emit_batch_size must be positive, got %d", c.EmitBatchSize))
	}
	if c.Limits.MaxBufferedBytes <= 0 || c.Limits.MaxBufferedBytes > maxBufferedBytesBound {
		errs = append(errs, fmt.Errorf("limits.max_buffered_bytes must be positive and at most %d, got %d", int64(maxBufferedBytesBound), c.Limits.MaxBufferedBytes))
	}
	for _, r := range c.Evidence.Require {
		if _, ok := evidenceChecks[r]; !ok {
			errs = append(errs, fmt.Errorf("evidence.require: unknown check %q (known: %s)", r, strings.Join(allChecks(), ", ")))
		}
	}
	switch c.RawSpans {
	case rawQuarantined, rawAll, rawNone:
	default:
		errs = append(errs, fmt.Errorf("raw_spans must be one of %q, %q, %q; got %q", rawQuarantined, rawAll, rawNone, c.RawSpans))
	}
	for kind, m := range map[string]map[string]string{"metadata": c.Metadata, "assertions": c.Assertions} {
		for name, expr := range m {
			if name == "" || strings.TrimSpace(expr) == "" {
				errs = append(errs, fmt.Errorf("%s: entry %q needs a name and an OTTL expression", kind, name))
			}
		}
	}
	if c.KeepOpenOnShutdown && c.Storage == nil {
		errs = append(errs, errors.New("keep_open_on_shutdown requires storage: without it the open cases would be lost"))
	}
	errs = append(errs, c.Pricing.validate()...)
	if c.Select != nil {
		errs = append(errs, c.Select.validate()...)
	}
	return errors.Join(errs...)
}

// maxBufferedBytesBound keeps limits.max_buffered_bytes plus its build headroom (emit.go) within
// an int64: past it the sum wraps negative, and every build would forget the ids that recognise
// retries after a close.
const maxBufferedBytesBound = 1 << 62

const (
	rawQuarantined = "quarantined"
	rawAll         = "all"
	rawNone        = "none"
)

// requiredReasons is the set of evidence reason codes that quarantine a case.
func (c *Config) requiredReasons() map[string]bool {
	out := map[string]bool{}
	for _, name := range c.Evidence.Require {
		for _, code := range evidenceChecks[name] {
			out[code] = true
		}
	}
	return out
}
