package replayparquetexporter

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
)

// The object store is a mirror of the local dataset root: a file is published locally first
// (atomically, and durable before the queue drops its cases), then uploaded. An upload that
// fails does not fail the batch — its rows are safe on local disk, and writing the batch again
// would duplicate them — it is retried by the next write, at shutdown and at the next start.

func (e *parquetExporter) startObjectStore(ctx context.Context) error {
	oc, ok := e.cfg.objectStore()
	if !ok {
		return nil
	}
	store, err := dataset.NewObjectStore(ctx, oc)
	if err != nil {
		return fmt.Errorf("replay_parquet: object_store: %w", err)
	}
	e.store, e.storeURL = store, oc.URL
	// Files published before a crash that came before their upload.
	e.syncObjectStore(ctx)
	return nil
}

// resyncObjectStore makes the next sync look for files published outside a write's result.
func (e *parquetExporter) resyncObjectStore() {
	if e.store != nil {
		e.store.Resync()
	}
}

// syncObjectStore uploads what the bucket lacks after a failure or a restart; a no-op otherwise.
func (e *parquetExporter) syncObjectStore(ctx context.Context) {
	if e.store == nil {
		return
	}
	n, err := e.store.Sync(ctx, e.cfg.root())
	if n > 0 {
		e.logger.Info("uploaded files the object store did not hold yet", zap.Int("files", n), zap.String("url", e.storeURL))
	}
	if err != nil {
		e.logger.Error("object store: some published files are not uploaded yet; they stay in the local folder and are retried by the next write and at the next start",
			zap.String("url", e.storeURL), zap.Error(err))
	}
}

// upload mirrors the files one write published.
func (e *parquetExporter) upload(ctx context.Context, res dataset.Result) {
	if e.store == nil {
		return
	}
	e.syncObjectStore(ctx)
	files := make([]dataset.File, len(res.Files))
	for i, f := range res.Files {
		files[i] = f.File
	}
	if err := e.store.Upload(ctx, e.cfg.root(), files); err != nil {
		e.logger.Error("object store: published files not uploaded yet; they stay in the local folder and are retried by the next write and at the next start",
			zap.String("url", e.storeURL), zap.Error(err))
	}
}
