package replaycaseprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadata"
	"github.com/reprise-dev/reprise/scrub"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg
}

func TestLoadConfig(t *testing.T) {
	def := loadConfig(t, "")
	assert.Equal(t, createDefaultConfig(), def)
	require.NoError(t, confmap.Validate(def))

	storageID := component.MustNewID("file_storage")
	custom := loadConfig(t, "custom")
	require.NoError(t, confmap.Validate(custom))
	assert.Equal(t, &Config{
		RootGracePeriod: 5 * time.Second,
		IdleTimeout:     time.Minute,
		MaxAge:          10 * time.Minute,
		Limits:          LimitsConfig{MaxOpenTraces: 50000, MaxSpansPerTrace: 2000, MaxEventsPerTrace: 1000, MaxBufferedBytes: 1 << 30},
		Evidence:        EvidenceConfig{Require: []string{"root_span", "llm_steps", "input_messages", "model_output", "tool_results"}},
		Metadata:        map[string]string{"route": `span.attributes["app.route"]`, "tenant_class": `resource.attributes["tenant.class"]`},
		Assertions:      map[string]string{"expected": `span.attributes["app.expected"]`},
		Select: &SelectConfig{Rules: map[string]string{
			"error_root": `IsRootSpan() and span.status.code == STATUS_CODE_ERROR`,
			"low_score":  `(log.event_name == "gen_ai.evaluation.result" or log.attributes["event.name"] == "gen_ai.evaluation.result") and Double(log.attributes["gen_ai.evaluation.score.value"]) < 0.5`,
		}, SampleRate: 0.01, Unselected: "pass"},
		RawSpans:           "all",
		ForwardJoinedLogs:  true,
		TrustedUpstream:    true,
		EmitBatchSize:      64,
		Storage:            &storageID,
		KeepOpenOnShutdown: true,
		Scrub: scrub.Config{Enabled: true, Key: "a-test-key", Detectors: map[string]string{"email": "quarantine", "phone_number": "off"},
			Rules: []scrub.RuleConfig{{Kind: "employee_id", Pattern: `\bEMP-\d{6}\b`}, {Kind: "internal_ticket", Keys: []string{"ticket_id"}, Action: "quarantine"}}},
	}, custom)
}

func TestValidateNamesTheField(t *testing.T) {
	for name, want := range map[string][]string{
		"bad_durations": {"root_grace_period must be positive, got 0s", "idle_timeout must be positive, got -1s"},
		"bad_limits":    {"limits.max_open_traces must be positive, got 0", "limits.max_spans_per_trace must be positive, got -5", "limits.max_events_per_trace must be positive, got 0", "limits.max_buffered_bytes must be positive and at most 4611686018427387904, got 0", "emit_batch_size must be positive, got -1"},
		"bad_policy":    {`evidence.require: unknown check "model_anwser" (known: consistent_conventions, embeddings, inline_content, input_messages, llm_steps, model_name, model_output, parseable_content, root_span, tool_results, valid_values)`, `raw_spans must be one of "quarantined", "all", "none"; got "sometimes"`},
		"short_max_age": {"max_age (30s) must not be shorter than idle_timeout (1m0s)"},
		// A number without a unit (REPRISE_ROOT_GRACE=15) is read as nanoseconds: every case
		// closed at once, and log events trailing their spans became late fragments.
		"unitless_durations": {"root_grace_period is 15ns: a number without a unit is nanoseconds; give the unit (15s)", "idle_timeout is 30ns"},
		// A case idle for idle_timeout closes whether its root arrived or not: a longer grace
		// period would never be waited for.
		"grace_past_idle": {"root_grace_period (1m0s) must not be longer than idle_timeout (30s)"},
		// Without max_usd there is no budget, so the action would quarantine nothing.
		"quarantine_without_budget": {"pricing.budget.action quarantine needs pricing.budget.max_usd"},
		// The build limit adds a quarter to it: past this bound the sum wraps negative.
		"overflowing_buffer": {"limits.max_buffered_bytes must be positive and at most 4611686018427387904, got 9223372036854775807"},
		"bad_select":         {"select.rules.broken: not a span condition", "select.sample_rate must be between 0 and 1, got 2", `select.unselected must be "drop" or "pass", got "keep"`},
		"bad_scrub":          {`scrub.detectors: unknown kind "emial"`, "scrub.rules[0].pattern: error parsing regexp"},
	} {
		t.Run(name, func(t *testing.T) {
			err := confmap.Validate(loadConfig(t, name))
			require.Error(t, err)
			for _, w := range want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

func TestBadOTTLFailsAtCreate(t *testing.T) {
	cfg := loadConfig(t, "bad_ottl")
	require.NoError(t, confmap.Validate(cfg))
	_, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.Error(t, err)
	assert.ErrorContains(t, err, "metadata.route")
	assert.ErrorContains(t, err, `missing context name for path "attributes[app.route]"`)
}

// limits.max_open_traces bounds what is buffered, and memory is bounded by max_buffered_bytes:
// nothing is allocated for it up front. Start-up once made rings of that many entries (the
// selections and, with storage, the close marks remembered), and panicked on a large value.
func TestLargeMaxOpenTracesStarts(t *testing.T) {
	ctx := context.Background()
	host, ext := teststorage.Start(t, t.TempDir())
	defer func() { require.NoError(t, ext.Shutdown(ctx)) }()
	cfg := loadConfig(t, "custom") // with select and storage
	cfg.Limits.MaxOpenTraces = 1 << 40
	require.NoError(t, confmap.Validate(cfg))
	p, err := NewFactory().CreateTraces(ctx, processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx, host))
	require.NoError(t, p.Shutdown(ctx))
}
