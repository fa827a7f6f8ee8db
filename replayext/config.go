package replayext

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"

	"github.com/reprise-dev/reprise/scrub"
)

// Config of the replay extension.
type Config struct {
	// ServerConfig is the collector's HTTP server config: endpoint (default 127.0.0.1:8790),
	// tls, auth (any server authenticator extension), cors, max_request_body_size, timeouts.
	confighttp.ServerConfig `mapstructure:",squash"`
	// Directory is the dataset root the replay_parquet exporter writes (its `directory`).
	// Default "./reprise-data".
	Directory string `mapstructure:"directory"`
	// RefreshInterval is how often the datasets are scanned for new files. Default 1s.
	RefreshInterval time.Duration `mapstructure:"refresh_interval"`
	// Mode is the miss semantics: "strict" (default) serves only an exact call-site match;
	// "lenient" serves the next recorded call of the case when nothing matches, and records a
	// divergence. A request can choose with the X-Replay-Mode header.
	Mode string `mapstructure:"mode"`
	// Scrub is the secrets policy applied to incoming requests before matching. Configure it
	// like the replay_case processor's (same detectors, rules and key), so that a request that
	// carries a real secret matches its scrubbed recording.
	Scrub scrub.Config `mapstructure:"scrub"`
}

const (
	modeStrict  = "strict"
	modeLenient = "lenient"
)

var _ confmap.Validator = (*Config)(nil)

// Validate rejects settings the extension cannot honour.
func (c *Config) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Directory) == "" {
		errs = append(errs, errors.New("directory must not be empty"))
	}
	if c.RefreshInterval <= 0 {
		errs = append(errs, fmt.Errorf("refresh_interval must be positive, got %s", c.RefreshInterval))
	}
	if c.Mode != modeStrict && c.Mode != modeLenient {
		errs = append(errs, fmt.Errorf("mode must be %q or %q, got %q", modeStrict, modeLenient, c.Mode))
	}
	return errors.Join(errs...)
}
