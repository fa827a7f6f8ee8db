package strictenvprovider

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// unset is a variable no test sets.
const unset = "REPRISE_STRICTENV_TEST_UNSET"

func retrieve(t *testing.T, uri string) (any, error) {
	t.Helper()
	p := NewFactory().Create(confmap.ProviderSettings{Logger: zap.NewNop()})
	t.Cleanup(func() { assert.NoError(t, p.Shutdown(context.Background())) })
	ret, err := p.Retrieve(context.Background(), uri, nil)
	if err != nil {
		return nil, err
	}
	return ret.AsRaw()
}

func TestServesTheEnvScheme(t *testing.T) {
	p := NewFactory().Create(confmap.ProviderSettings{Logger: zap.NewNop()})
	assert.Equal(t, "env", p.Scheme())
	assert.NoError(t, confmaptest.ValidateProviderScheme(p))
}

// The upstream provider expanded ${env:REPRISE_INSTANCE}, unset, to an empty value with a warning,
// and config/tier2-kafka.yaml then started with no static membership and a staging folder shared
// by every collector started the same way.
func TestAnUnsetVariableWithoutADefaultIsAnError(t *testing.T) {
	_, err := retrieve(t, "env:"+unset)
	require.Error(t, err)
	assert.Equal(t, "environment variable "+unset+" is not set and ${env:"+unset+"} gives no default: set it, or write ${env:"+unset+":-<default>}", err.Error())
}

func TestAnUnsetVariableTakesItsDefault(t *testing.T) {
	v, err := retrieve(t, "env:"+unset+":-./reprise-data")
	require.NoError(t, err)
	assert.Equal(t, "./reprise-data", v)
	v, err = retrieve(t, "env:"+unset+":-8888")
	require.NoError(t, err)
	assert.Equal(t, 8888, v, "a default is YAML, as upstream")
}

// ${env:NAME:-} is how a config says "empty when unset" (config/local.yaml's scrub key).
func TestAnUnsetVariableTakesAnExplicitEmptyDefault(t *testing.T) {
	v, err := retrieve(t, "env:"+unset+":-")
	require.NoError(t, err)
	assert.Equal(t, "", v)
}

func TestASetVariableIsItsValue(t *testing.T) {
	t.Setenv("REPRISE_STRICTENV_TEST_SET", "tier2-a")
	v, err := retrieve(t, "env:REPRISE_STRICTENV_TEST_SET")
	require.NoError(t, err)
	assert.Equal(t, "tier2-a", v)
	v, err = retrieve(t, "env:REPRISE_STRICTENV_TEST_SET:-ignored")
	require.NoError(t, err)
	assert.Equal(t, "tier2-a", v, "the default is for an unset variable only")
}

// A variable set to the empty string was set on purpose: upstream's behaviour (an empty value,
// logged at info level) is kept, and a component that needs a value says so (scrub.require_key).
func TestAVariableSetEmptyIsEmpty(t *testing.T) {
	t.Setenv("REPRISE_STRICTENV_TEST_EMPTY", "")
	core, logs := observer.New(zap.InfoLevel)
	p := NewFactory().Create(confmap.ProviderSettings{Logger: zap.New(core)})
	ret, err := p.Retrieve(context.Background(), "env:REPRISE_STRICTENV_TEST_EMPTY", nil)
	require.NoError(t, err)
	v, err := ret.AsRaw()
	require.NoError(t, err)
	assert.Nil(t, v)
	assert.Equal(t, 1, logs.FilterMessage("Configuration references empty environment variable").Len())
}

func TestAnInvalidNameIsRefused(t *testing.T) {
	for _, uri := range []string{"env:1BAD", "env:BAD-NAME", "env:BAD-NAME:-default", "env:"} {
		_, err := retrieve(t, uri)
		require.Error(t, err, uri)
		assert.Contains(t, err.Error(), "has invalid name", uri)
	}
}

func TestAnotherSchemeIsRefused(t *testing.T) {
	_, err := retrieve(t, "file:"+unset)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not supported")
}
