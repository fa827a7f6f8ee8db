package replayext

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/confdur"
	"github.com/reprise-dev/reprise/scrub"
)

// Config of the replay extension.
type Config struct {
	// ServerConfig is the collector's HTTP server config: endpoint (default 127.0.0.1:8790),
	// tls, auth (any server authenticator extension), cors, max_request_body_size, timeouts.
	confighttp.ServerConfig `mapstructure:",squash"`
	// Directory is the dataset root the replay_parquet exporter writes (its `directory`).
	// Default "./reprise-data". Not read when object_store is set.
	Directory string `mapstructure:"directory"`
	// ObjectStore, when set, reads the dataset from the S3 bucket the replay_parquet exporters
	// upload to (the exporter's `object_store` block: url s3://bucket/prefix; endpoint, region,
	// path_style for S3-compatible servers) instead of Directory, so that one replay server
	// serves the cases that collectors on several hosts wrote. Each refresh lists the bucket;
	// cases are read with ranged GETs. Default: not set (Directory).
	ObjectStore configoptional.Optional[dataset.ObjectStoreConfig] `mapstructure:"object_store"`
	// CaseCacheSize is how many recently served cases are kept in memory; the others are read
	// from the Parquet files when a request needs them. Default 256.
	CaseCacheSize int `mapstructure:"case_cache_size"`
	// RefreshInterval is how often the datasets are scanned for new files. Default 1s.
	RefreshInterval time.Duration `mapstructure:"refresh_interval"`
	// Mode is what a request that matches no recording exactly gets: "strict" (default), a
	// 404 naming the fields where it differs from the next recorded call; "lenient", that
	// next recorded call, logged as a divergence; "hybrid", the live answer of the upstream
	// (for that call and every later model call of the session), logged as a divergence. A
	// request can choose with X-Replay-Mode.
	Mode Mode `mapstructure:"mode"`
	// Upstream is where hybrid mode forwards model calls, per API. Nothing is ever forwarded
	// in strict or lenient mode, and the client's own credentials are forwarded only in
	// hybrid mode, and only without `auth`: with it they are the replay server's, and the
	// upstream's come from upstream.<api>.headers (or .auth).
	Upstream UpstreamConfig `mapstructure:"upstream"`
	// LocalDebug adds the recorded and requested values of each differing field to miss errors
	// and divergences. Default false. Enable it only on a server that you alone can reach: the
	// values include recorded content, and comparing them lets a client test guesses of
	// scrubbed values.
	LocalDebug bool `mapstructure:"local_debug"`
	// MaxConcurrentRequests is how many requests are answered at once. A request past it waits
	// up to busyWait for one to end, then gets a 503 with Retry-After (the SDKs retry it). Each
	// request may hold a body of max_request_body_size, so the two together bound the memory
	// of the bodies held. Default 64.
	MaxConcurrentRequests int `mapstructure:"max_concurrent_requests"`
	// Sessions bounds the replay cursors kept in memory.
	Sessions SessionsConfig `mapstructure:"sessions"`
	// Scrub is the secrets policy applied to incoming requests before matching. Configure it
	// like the replay_case processor's (same detectors, rules and key), so that a request that
	// carries a real secret matches its scrubbed recording.
	Scrub scrub.Config `mapstructure:"scrub"`
}

// UpstreamConfig names the live API of each wire format hybrid mode can forward.
type UpstreamConfig struct {
	// OpenAI is the OpenAI API client config: endpoint is the base URL the OpenAI SDKs use
	// (e.g. https://api.openai.com/v1; the part of the request path after /openai/v1 is
	// appended), plus timeout, tls, proxy_url, headers. Default: no endpoint, so hybrid mode
	// refuses to start.
	OpenAI confighttp.ClientConfig `mapstructure:"openai"`
	// Anthropic is the Anthropic API client config: endpoint is the base URL the Anthropic
	// SDKs use, without /v1 (e.g. https://api.anthropic.com; the part of the request path
	// after /anthropic is appended). Default: no endpoint.
	Anthropic confighttp.ClientConfig `mapstructure:"anthropic"`
}

// SessionsConfig bounds the sessions (see the README's "Sessions" rule).
type SessionsConfig struct {
	// MaxSessions is how many sessions are kept; past it the least recently used is forgotten,
	// half of the room going to sessions seen once, so that a flood of new sessions cannot
	// evict those replaying a run. Default 10000.
	MaxSessions int `mapstructure:"max_sessions"`
	// IdleTimeout forgets a session that made no request for this long. Default 15m.
	IdleTimeout time.Duration `mapstructure:"idle_timeout"`
	// DefaultID is the session of a request with neither X-Replay-Session nor traceparent.
	// Default "": each such request is a session of its own, so that two clients never share
	// a cursor. A server that replays one run at a time (`reprise ci` runs one per case) sets
	// it, so that an agent sending neither header still has one cursor per run: a call made
	// more often than recorded is then refused instead of answered again from the start.
	DefaultID string `mapstructure:"default_id"`
}

var _ confmap.Validator = (*Config)(nil)

// Validate rejects settings the extension cannot honour.
func (c *Config) Validate() error {
	var errs []error
	// The object_store block itself is validated by the collector, prefixed with its key.
	if !c.ObjectStore.HasValue() && strings.TrimSpace(c.Directory) == "" {
		errs = append(errs, errors.New("directory must not be empty"))
	}
	// The exporter's directory takes an s3:// URL; this one is a folder only.
	if err := dataset.RefuseS3URL(c.Directory); err != nil && !c.ObjectStore.HasValue() {
		errs = append(errs, err)
	}
	// net.Listen takes "" for every interface at a random port: an empty ${env:…} (a variable
	// set empty, a :- default, an unset one in a collector built with upstream's env provider)
	// would open the server to the network, and to no client that knows where.
	if strings.TrimSpace(c.NetAddr.Endpoint) == "" {
		errs = append(errs, fmt.Errorf("endpoint must not be empty: host:port to listen on (default %s)", DefaultEndpoint))
	}
	errs = append(errs, c.badTimeouts()...)
	if c.RefreshInterval <= 0 {
		errs = append(errs, fmt.Errorf("refresh_interval must be positive, got %s", c.RefreshInterval))
	} else if err := confdur.Unitless("refresh_interval", c.RefreshInterval, "s"); err != nil {
		errs = append(errs, err)
	}
	if c.Mode != ModeStrict && c.Mode != ModeLenient && c.Mode != ModeHybrid {
		errs = append(errs, fmt.Errorf("mode must be %q, %q or %q, got %s", ModeStrict, ModeLenient, ModeHybrid, c.Mode))
	}
	for api, e := range map[string]string{"openai": c.Upstream.OpenAI.Endpoint, "anthropic": c.Upstream.Anthropic.Endpoint} {
		if u, err := url.Parse(e); e != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			errs = append(errs, fmt.Errorf("upstream.%s.endpoint must be an http(s) base URL, got %q", api, e))
		}
	}
	if c.Mode == ModeHybrid && c.Upstream.OpenAI.Endpoint == "" && c.Upstream.Anthropic.Endpoint == "" {
		errs = append(errs, errors.New("mode hybrid needs upstream.openai.endpoint or upstream.anthropic.endpoint"))
	}
	if c.CaseCacheSize < 1 {
		errs = append(errs, fmt.Errorf("case_cache_size must be positive, got %d", c.CaseCacheSize))
	}
	// confighttp takes a negative limit for its default (20 MiB): a sign typo, or a limit
	// meant as "none", would silently give another bound than the one written.
	if c.MaxRequestBodySize < 0 {
		errs = append(errs, fmt.Errorf("max_request_body_size must not be negative (0: the default, 20 MiB), got %d", c.MaxRequestBodySize))
	}
	if c.MaxConcurrentRequests < 1 {
		errs = append(errs, fmt.Errorf("max_concurrent_requests must be positive, got %d", c.MaxConcurrentRequests))
	}
	if c.Sessions.MaxSessions < 2 {
		errs = append(errs, fmt.Errorf("sessions.max_sessions must be at least 2, got %d", c.Sessions.MaxSessions))
	}
	if c.Sessions.IdleTimeout <= 0 {
		errs = append(errs, fmt.Errorf("sessions.idle_timeout must be positive, got %s", c.Sessions.IdleTimeout))
	} else if err := confdur.Unitless("sessions.idle_timeout", c.Sessions.IdleTimeout, "m"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// badTimeouts refuses the timeouts net/http takes for none at all when negative, unlike 0
// (which turns read and write bounds off, and makes the header and idle bounds read_timeout's):
// a sign typo would silently lift a bound the README promises; and those written without a
// unit, which time out every request.
func (c *Config) badTimeouts() []error {
	type timeout struct {
		name, zero string
		d          time.Duration
	}
	all := []timeout{
		{"read_timeout", "0 turns it off", c.ReadTimeout},
		{"read_header_timeout", "0 falls back to read_timeout", c.ReadHeaderTimeout},
		{"write_timeout", "0 turns it off", c.WriteTimeout},
		{"upstream.openai.timeout", "0: no limit", c.Upstream.OpenAI.Timeout},
		{"upstream.anthropic.timeout", "0: no limit", c.Upstream.Anthropic.Timeout},
	}
	if c.Keepalive.HasValue() {
		all = append(all, timeout{"keepalive.idle_timeout", "0 falls back to read_timeout", c.Keepalive.Get().IdleTimeout})
	}
	var errs []error
	for _, t := range all {
		if t.d < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative (%s), got %s", t.name, t.zero, t.d))
		} else if err := confdur.Unitless(t.name, t.d, "s"); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
