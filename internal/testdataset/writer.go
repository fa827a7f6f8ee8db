// Package testdataset gives tests a replay_parquet exporter writing into a dataset root.
package testdataset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/reprise-dev/reprise/exporter/replayparquetexporter"
)

// Writer is a started replay_parquet exporter into root with the given compression and no
// sending queue, so that files are published when ConsumeTraces returns. The caller shuts it
// down.
func Writer(t testing.TB, root, compression string) exporter.Traces {
	t.Helper()
	f := replayparquetexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*replayparquetexporter.Config)
	cfg.Directory, cfg.Compression = root, compression
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	return exp
}
