package replayext

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/reprise-dev/reprise/replayext/internal/metadata"
)

func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	t.Setenv("REPRISE_SCRUB_KEY", "0123456789abcdef0123456789abcdef")
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	return cfg, sub.Unmarshal(cfg)
}

func TestLoadConfig(t *testing.T) {
	def, err := loadConfig(t, "")
	require.NoError(t, err)
	require.NoError(t, confmap.Validate(def))
	assert.Equal(t, DefaultEndpoint, def.NetAddr.Endpoint)
	assert.Equal(t, "./reprise-data", def.Directory)
	assert.Equal(t, 256, def.CaseCacheSize)
	assert.Equal(t, ModeStrict, def.Mode)
	assert.False(t, def.LocalDebug, "values never leave the server unless asked for")
	assert.Equal(t, SessionsConfig{MaxSessions: 10_000, IdleTimeout: 15 * time.Minute}, def.Sessions)
	assert.Equal(t, 64, def.MaxConcurrentRequests)

	custom, err := loadConfig(t, "custom")
	require.NoError(t, err)
	require.NoError(t, confmap.Validate(custom))
	assert.Equal(t, "0.0.0.0:8790", custom.NetAddr.Endpoint)
	require.True(t, custom.Auth.HasValue())
	assert.Equal(t, "bearertokenauth/replay", custom.Auth.Get().Config.AuthenticatorID.String())
	assert.Equal(t, "/var/lib/reprise/data", custom.Directory)
	assert.Equal(t, 64, custom.CaseCacheSize)
	assert.Equal(t, 5*time.Second, custom.RefreshInterval)
	assert.Equal(t, ModeHybrid, custom.Mode)
	assert.Equal(t, "https://api.openai.com/v1", custom.Upstream.OpenAI.Endpoint)
	assert.Equal(t, 60*time.Second, custom.Upstream.OpenAI.Timeout)
	assert.Equal(t, "https://api.anthropic.com", custom.Upstream.Anthropic.Endpoint)
	assert.Empty(t, def.Upstream.OpenAI.Endpoint, "nothing is forwarded unless configured")
	assert.True(t, custom.LocalDebug)
	assert.Equal(t, SessionsConfig{MaxSessions: 500, IdleTimeout: 2 * time.Minute, DefaultID: "ci"}, custom.Sessions)
	assert.Equal(t, 16, custom.MaxConcurrentRequests)
}

func TestValidateNamesTheField(t *testing.T) {
	bad, err := loadConfig(t, "bad")
	require.NoError(t, err)
	err = confmap.Validate(bad)
	require.Error(t, err)
	for _, want := range []string{"directory must not be empty", "case_cache_size must be positive, got 0", "refresh_interval must be positive, got 0s", "max_concurrent_requests must be positive, got 0", "sessions.max_sessions must be at least 2, got 1", "sessions.idle_timeout must be positive, got -1s"} {
		assert.ErrorContains(t, err, want)
	}
	_, err = loadConfig(t, "bad_mode")
	assert.ErrorContains(t, err, `mode must be "strict", "lenient" or "hybrid", got "sloppy"`)
	for name, want := range map[string]string{
		"hybrid_without_upstream": "mode hybrid needs upstream.openai.endpoint or upstream.anthropic.endpoint",
		"bad_upstream":            `upstream.openai.endpoint must be an http(s) base URL, got "api.openai.com/v1"`,
		// An empty endpoint (an ${env:…} set empty) would listen on every interface, at a random port.
		"empty_endpoint": "endpoint must not be empty",
		// Read as a local path, the URL named a folder that never exists: the server listed
		// no case and said nothing.
		"bucket_directory": `directory "s3://reprise/datasets?endpoint=http://127.0.0.1:9000&use_path_style=true" is a bucket URL: read a bucket with object_store (url, endpoint, region, path_style)`,
	} {
		cfg, err := loadConfig(t, name)
		require.NoError(t, err)
		assert.ErrorContains(t, confmap.Validate(cfg), want, name)
	}
}

func TestModeNames(t *testing.T) {
	for _, m := range []Mode{ModeStrict, ModeLenient, ModeHybrid} {
		var back Mode
		text, err := m.MarshalText()
		require.NoError(t, err)
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, m, back)
	}
	assert.Equal(t, "Mode(7)", Mode(7).String())
}

// net/http takes a negative timeout for none at all, unlike 0 (read_header_timeout 0 falls back
// to read_timeout): a typo would silently lift the bound the README promises.
// A duration written as a plain number (read_timeout: 30, REPRISE_SESSION_TIMEOUT=15) decodes as
// nanoseconds and passed: every request timed out, every session was forgotten at once. A
// negative body limit was taken for the default.
func TestUnitlessDurationsAndANegativeBodyLimitAreRefused(t *testing.T) {
	cfg, err := loadConfig(t, "unitless_durations_negative_body_limit")
	require.NoError(t, err)
	err = confmap.Validate(cfg)
	for _, want := range []string{
		"read_timeout is 30ns: a number without a unit is nanoseconds; give the unit (30s)",
		"upstream.openai.timeout is 60ns",
		"refresh_interval is 10ns",
		"sessions.idle_timeout is 15ns: a number without a unit is nanoseconds; give the unit (15m)",
		"max_request_body_size must not be negative (0: the default, 20 MiB), got -1",
	} {
		assert.ErrorContains(t, err, want)
	}
}

func TestNegativeTimeoutsAreRefused(t *testing.T) {
	cfg, err := loadConfig(t, "negative_timeouts")
	require.NoError(t, err)
	err = confmap.Validate(cfg)
	for _, want := range []string{
		"read_timeout must not be negative (0 turns it off), got -1s",
		"read_header_timeout must not be negative (0 falls back to read_timeout), got -1s",
		"write_timeout must not be negative (0 turns it off), got -1s",
		"keepalive.idle_timeout must not be negative (0 falls back to read_timeout), got -1s",
		"upstream.openai.timeout must not be negative (0: no limit), got -1s",
		"upstream.anthropic.timeout must not be negative (0: no limit), got -2s",
	} {
		assert.ErrorContains(t, err, want)
	}
}
