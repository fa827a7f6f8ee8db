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

// NewFactory returns the factory of the replay extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = DefaultEndpoint
	return &Config{ServerConfig: server, Directory: "./reprise-data", CaseCacheSize: 256, RefreshInterval: time.Second, Mode: ModeStrict, Upstream: UpstreamConfig{OpenAI: confighttp.NewDefaultClientConfig(), Anthropic: confighttp.NewDefaultClientConfig()},
		Sessions: SessionsConfig{MaxSessions: 10_000, IdleTimeout: 15 * time.Minute}, Scrub: scrub.DefaultConfig()}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newReplay(set, cfg.(*Config))
}
