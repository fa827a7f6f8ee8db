// Package strictenvprovider is the confmap provider of the `env` scheme in the reprise collector:
// upstream's envprovider, except that a reference to an unset variable without a default is an
// error.
//
// Upstream expands ${env:NAME}, NAME unset, to an empty value with a warning (which `validate`
// does not even print) and the collector starts: config/tier2-kafka.yaml without
// REPRISE_INSTANCE then had no static Kafka membership and one staging folder for every such
// collector. A value that may be empty says so with a default, ${env:NAME:-} included; a
// variable set to the empty string was set on purpose and stays empty, as upstream.
package strictenvprovider

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.uber.org/zap"
)

const scheme = "env"

// NewFactory returns the factory of the `env` provider.
func NewFactory() confmap.ProviderFactory {
	return confmap.NewProviderFactory(func(ps confmap.ProviderSettings) confmap.Provider {
		quiet := ps
		quiet.Logger = zap.NewNop()
		upstream := envprovider.NewFactory()
		return &provider{Provider: upstream.Create(ps), quiet: upstream.Create(quiet)}
	})
}

// provider is upstream's, which serves every reference but the unset one without a default.
type provider struct {
	confmap.Provider
	// quiet is upstream's without a logger: it checks the scheme and the name of an unset
	// variable without logging that the variable is unset.
	quiet confmap.Provider
}

func (p *provider) Retrieve(ctx context.Context, uri string, watcher confmap.WatcherFunc) (*confmap.Retrieved, error) {
	// The same split as upstream's: NAME, then an optional default after the first ":-".
	name, _, hasDefault := strings.Cut(strings.TrimPrefix(uri, scheme+":"), ":-")
	if _, set := os.LookupEnv(name); set || hasDefault {
		return p.Provider.Retrieve(ctx, uri, watcher)
	}
	if _, err := p.quiet.Retrieve(ctx, uri, watcher); err != nil {
		return nil, err // another scheme, an invalid name: upstream's error
	}
	return nil, fmt.Errorf("environment variable %s is not set and ${env:%s} gives no default: set it, or write ${env:%s:-<default>}", name, name, name)
}
