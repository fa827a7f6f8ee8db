package kafka

import (
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"

	"github.com/reprise-dev/reprise/internal/testcollector"
)

// KAFKA_BROKERS names every broker of a cluster, comma-separated, and both tiers get each as a
// broker of its own. The configs had brokers: ["${env:KAFKA_BROKERS}"], a list of one item, so
// kafka-1:9092,kafka-2:9092 was one address ("no such host"): tier 1 answered agents 200 and
// queued every run on disk for good, and tier 2 consumed nothing, with only a franz-go warning.
func TestKafkaBrokersIsACommaSeparatedList(t *testing.T) {
	t.Setenv("KAFKA_BROKERS", "kafka-1:9092,kafka-2:9092")
	want := []string{"kafka-1:9092", "kafka-2:9092"}

	tier1 := resolvedConfig(t, "tier1-kafka.yaml")
	exporter := &kafkaexporter.Config{}
	require.NoError(t, mustSub(t, tier1, "exporters::kafka").Unmarshal(exporter))
	assert.Equal(t, want, exporter.ClientConfig.Brokers, "tier 1 kafka exporter")

	tier2 := resolvedConfig(t, "tier2-kafka.yaml")
	for _, id := range []string{"kafka/traces", "kafka/logs"} {
		receiver := &kafkareceiver.Config{}
		require.NoError(t, mustSub(t, tier2, "receivers::"+id).Unmarshal(receiver))
		assert.Equal(t, want, receiver.ClientConfig.Brokers, "tier 2 %s", id)
	}
}

// resolvedConfig is config/<name> with its ${env:…} references expanded, as the collector
// resolves it before each component decodes its part; with upstream's env provider, which
// expands an unset variable to "" (the collector's confmap/provider/strictenvprovider refuses it), so that a
// test sets only the variables it checks.
func resolvedConfig(t *testing.T, name string) *confmap.Conf {
	t.Helper()
	resolver, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + filepath.Join(testcollector.RepoRoot(), "config", name)},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
	})
	require.NoError(t, err)
	conf, err := resolver.Resolve(t.Context())
	require.NoError(t, err)
	return conf
}

func mustSub(t *testing.T, conf *confmap.Conf, key string) *confmap.Conf {
	t.Helper()
	sub, err := conf.Sub(key)
	require.NoError(t, err)
	return sub
}
