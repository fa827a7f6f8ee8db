package replayparquetexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
)

// Two exporters of one collector on one local folder, one mirroring it to a bucket and the other
// not (or to another bucket): the mirror would upload the other's files into its bucket. The
// second start fails, naming the folder; two exporters with the same mirror share the folder.
func TestExportersSharingALocalRootMustShareItsMirror(t *testing.T) {
	plain := testConfig(t)
	first := newExporter(t, plain) // started
	defer func() { require.NoError(t, first.Shutdown(context.Background())) }()

	same := created(t, plain)
	require.NoError(t, same.Start(context.Background(), componenttest.NewNopHost()), "the same mirror (none) shares the folder")
	require.NoError(t, same.Shutdown(context.Background()))

	bucket := createDefaultConfig().(*Config)
	bucket.Directory = "s3://team-b/reprise?endpoint=http://127.0.0.1:1&region=us-east-1&use_path_style=true"
	bucket.LocalDirectory = plain.Directory
	bucket.QueueConfig = plain.QueueConfig
	require.NoError(t, bucket.Validate())
	second := created(t, bucket)
	err := second.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the local folder "+plain.Directory+" is already the dataset root of another replay_parquet exporter, mirrored to no object store")
	require.NoError(t, second.Shutdown(context.Background()))
}

func created(t *testing.T, cfg *Config) exporter.Traces {
	exp, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	return exp
}
