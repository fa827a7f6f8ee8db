package replayparquetexporter

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
	"github.com/reprise-dev/reprise/internal/testdataset/faults"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// storageHost is a host with one file_storage extension.
type storageHost struct {
	component.Host
	id  component.ID
	ext extension.Extension
}

func (h storageHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{h.id: h.ext}
}

// With storage, a batch the exporter could not write before shutdown (the disk is full) stays
// in the queue and is written after a restart.
func TestPersistentQueueKeepsUnwrittenBatchesAcrossARestart(t *testing.T) {
	f := filestorage.NewFactory()
	storageCfg := f.CreateDefaultConfig().(*filestorage.Config)
	storageCfg.Directory = t.TempDir()
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), storageCfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), nil))
	defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
	host := storageHost{id: component.NewID(f.Type()), ext: ext}

	cfg := createDefaultConfig().(*Config)
	cfg.Directory = filepath.Join(t.TempDir(), "data")
	cfg.QueueConfig.GetOrInsertDefault().StorageID = &host.id
	cfg.QueueConfig.Get().Batch.Get().FlushTimeout = 50 * time.Millisecond
	require.NoError(t, cfg.Validate())
	start := func(opts ...dataset.Option) exporter.Traces {
		set := exportertest.NewNopSettings(metadata.Type)
		set.ID = component.NewID(metadata.Type) // the queue's storage is keyed by the component id
		exp, err := newTraces(context.Background(), set, cfg, opts...)
		require.NoError(t, err)
		require.NoError(t, exp.Start(context.Background(), host))
		return exp
	}
	exp := start(faults.DiskFull(0, dataset.Steps))
	td, cases := caseSpans(t, testfixtures.OTelEvents, testfixtures.Traceloop)
	require.NoError(t, exp.ConsumeTraces(context.Background(), td)) // queued
	time.Sleep(200 * time.Millisecond)                              // past the flush timeout: the write is attempted and fails
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.NoDirExists(t, filepath.Join(cfg.Directory, dataset.Cases), "nothing was written before the restart")

	// The batch is still in storage, and a restart with a working disk writes it.
	exp = start()
	require.Eventually(t, func() bool {
		return len(readAll[replaycase.Case](t, cfg.Directory, dataset.Cases)) >= len(cases)
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.Len(t, readAll[replaycase.Case](t, cfg.Directory, dataset.Cases), len(cases))
}
