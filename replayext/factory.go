package replayext

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/extension"

	"github.com/reprise-dev/reprise/replayext/internal/metadata"
	"github.com/reprise-dev/reprise/scrub"
)

// DefaultEndpoint is where the extension listens unless configured otherwise.
const DefaultEndpoint = "127.0.0.1:8790"

// The server's read deadlines unless configured otherwise (read_header_timeout, read_timeout).
// An SDK sends a request's headers at once, and a body of max_request_body_size (20 MiB) in a
// minute needs about 350 KiB/s.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = time.Minute
)

// NewFactory returns the factory of the replay extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = DefaultEndpoint
	// confighttp bounds the headers (1 min) and an idle keep-alive connection (1 min) but not
	// the body: a client that sends headers and then stalls would hold a connection and its
	// goroutine for ever. read_timeout bounds the whole request, body included; net/http lifts
	// it once the body is read, so it never cuts an answer (a live stream) short.
	server.ReadHeaderTimeout = defaultReadHeaderTimeout
	server.ReadTimeout = defaultReadTimeout
	return &Config{ServerConfig: server, Directory: "./reprise-data", CaseCacheSize: 256, RefreshInterval: time.Second, MaxConcurrentRequests: 64, Mode: ModeStrict, Upstream: UpstreamConfig{OpenAI: confighttp.NewDefaultClientConfig(), Anthropic: confighttp.NewDefaultClientConfig()},
		Sessions: SessionsConfig{MaxSessions: 10_000, IdleTimeout: 15 * time.Minute}, Scrub: scrub.DefaultConfig()}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newReplay(set, cfg.(*Config))
}
