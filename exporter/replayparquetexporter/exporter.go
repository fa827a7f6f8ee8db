package replayparquetexporter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
	"github.com/reprise-dev/reprise/internal/droplog"
)

// parquetExporter is a thin component over package dataset, which owns the layout, the
// schema and publishing: it decodes the case spans it receives and hands them to a
// dataset.Writer, and turns what happened into telemetry.
type parquetExporter struct {
	cfg    *Config
	logger *zap.Logger
	// dropLog names, unsampled (internal/droplog), every case, row or file not written: left out,
	// quarantined instead of written, dropped, dead-lettered or set aside.
	dropLog   *zap.Logger
	telemetry *metadata.TelemetryBuilder
	writer    *dataset.Writer
	// store mirrors published files into an object store; nil without object_store.
	store    *dataset.ObjectStore
	storeURL string // the bucket's s3:// URL, for log lines
	// writerOptions are passed to the dataset writer (tests inject write failures with them).
	writerOptions []dataset.Option

	retentionStop, retentionDone chan struct{} // the retention loop, when retention is on
	retentionCancel              context.CancelFunc
	flushStop, flushDone         chan struct{} // the loop that publishes staged segments, with file_max_age
	releaseRoot                  func()        // gives up the claim on the local root (roots.go)
}

func newParquetExporter(set exporter.Settings, cfg *Config) (*parquetExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &parquetExporter{cfg: cfg, logger: set.Logger, dropLog: droplog.New(set.ID, "exporter"), telemetry: tb}, nil
}

// staleAfter is how old an uncommitted batch in staging must be before start deletes it: it was
// left by a process that died while writing (its cases are still in that process's queue, if
// persistent). A younger one may belong to another collector writing into the same root.
const staleAfter = 15 * time.Minute

func (e *parquetExporter) start(ctx context.Context, _ component.Host) (err error) {
	release, err := e.cfg.claimRoot()
	if err != nil {
		return fmt.Errorf("replay_parquet: %w", err)
	}
	e.releaseRoot = release
	defer func() {
		if err != nil {
			release()
		}
	}()
	w, err := dataset.NewWriter(dataset.WriterConfig{
		Root: e.cfg.root(), Staging: e.cfg.staging(), Compression: e.cfg.Compression,
		MaxRowsPerFile: e.cfg.MaxRowsPerFile, RowGroupRows: e.cfg.RowGroupRows,
		FileMaxAge: e.cfg.FileMaxAge, FileMaxStagedBytes: e.cfg.FileMaxStagedSize,
		SkipRedelivered: e.cfg.persistentQueue(),
	}, e.writerOptions...)
	if err != nil {
		return fmt.Errorf("replay_parquet: %w", err)
	}
	rec, err := w.Recover(time.Now().Add(-staleAfter))
	for _, f := range rec.RolledForward {
		e.logger.Warn("published a file of a batch committed before a crash", zap.String("file", f.Path), zap.Int("rows", f.Rows))
	}
	for _, f := range rec.Missing {
		// Nothing tells "published and removed since" (retention, an operator) from "lost":
		// say where it belonged and how many rows it held, and that the journal is kept.
		e.dropLog.Error("a file of a batch committed before a crash is neither in staging nor in the dataset: removed since it was published, or lost; the batch's journal is kept in staging as missing-batch-…",
			zap.String("file", f.Path), zap.Int("rows", f.Rows))
	}
	if rec.RolledBack > 0 {
		e.logger.Info("deleted batches left uncommitted by an interrupted write", zap.Int("batches", rec.RolledBack))
	}
	if err != nil {
		return fmt.Errorf("replay_parquet: recovering staging directory %s: %w", e.cfg.staging(), err)
	}
	e.writer = w
	if err := e.startObjectStore(ctx); err != nil {
		return err
	}
	e.startRetention()
	e.startFlush()
	e.flush(ctx, false) // segments adopted from a crashed run are due at once without file_max_age
	return nil
}

func (e *parquetExporter) shutdown(ctx context.Context) error {
	e.stopRetention()
	e.stopFlush()
	if e.releaseRoot != nil {
		defer e.releaseRoot()
	}
	if e.writer == nil {
		return nil
	}
	e.flush(ctx, true)
	err := e.writer.Close()
	e.resyncObjectStore()  // Close may have published committed batches
	e.syncObjectStore(ctx) // bounded by the shutdown deadline: what is not uploaded by then goes at the next start
	e.store.Close()
	return err
}

// push writes one batch of cases: every file is complete and published before push returns,
// so the queue only drops cases that are on disk. A case whose spans cannot be decoded becomes
// a quarantine row instead of failing the batch. A batch that cannot be written is
// dead-lettered under failed/ and the error returned, so that the queue retries it; the retry
// that succeeds removes the dead letter.
func (e *parquetExporter) push(ctx context.Context, td ptrace.Traces) error {
	batch := decodeCases(td)
	e.recordDecode(ctx, batch)
	if len(batch.cases) == 0 {
		return nil
	}
	ids := make([]string, len(batch.cases))
	for i, c := range batch.cases {
		ids[i] = c.CaseID
	}
	key := dataset.DeadLetterKey(ids)
	res, err := e.writer.Write(batch.cases)
	e.telemetry.ExporterReplayParquetInvalidUtf8Repaired.Add(ctx, int64(res.RepairedStrings))
	e.recordResent(ctx, res.Resent, reasonResent, "cases sent again after a crash are not written twice: a segment adopted at the restart or a file published within the hour before holds them")
	e.recordResent(ctx, res.Redelivered, reasonRedelivered, "cases the persistent queue delivered again after a crash are not written twice: they were written before it")
	if err == nil || len(res.Files) > 0 {
		// Also when the batch failed: the files of an earlier batch it published first. The
		// upload runs after every written batch, as it syncs what a failure left behind.
		e.recordFiles(ctx, res)
		e.upload(ctx, res)
	}
	switch {
	case err == nil:
		e.clearDeadLetter(key)
		if e.cfg.FileMaxAge > 0 {
			e.flush(ctx, false) // the batch was staged; publish the staged batches if due
		}
		return nil
	case errors.Is(err, dataset.ErrCommitted):
		// The batch is durable in staging; the next write or the next start publishes it.
		// Returning the error would make the queue write it a second time.
		e.resyncObjectStore()
		e.clearDeadLetter(key) // durable now: re-driving an earlier attempt's dead letter would double it
		e.logger.Error("a written batch could not be published yet; it is published by the next write or at the next start", zap.Strings("case_ids", ids), zap.Error(err))
		return nil
	}
	e.deadLetter(ctx, key, td, ids, err)
	return err
}

// clearDeadLetter removes the dead letter an earlier failed attempt of a batch left, once the
// batch is durable (written, or committed to staging).
func (e *parquetExporter) clearDeadLetter(key string) {
	if cleared, err := e.writer.ClearDeadLetter(key); cleared {
		e.logger.Info("a dead-lettered batch was written on retry; its dead letter is removed", zap.String("path", e.writer.DeadLetterPath(key)))
	} else if err != nil {
		e.logger.Error("cannot remove the dead letter of a batch that is now written; re-driving it would duplicate its cases", zap.String("path", e.writer.DeadLetterPath(key)), zap.Error(err))
	}
}

// deadLetter stores the batch under failed/ after a failed write, and says so at error level
// with every case id: if the queue's retries run out, these are the cases to re-drive.
func (e *parquetExporter) deadLetter(ctx context.Context, key string, td ptrace.Traces, ids []string, writeErr error) {
	e.telemetry.ExporterReplayParquetWriteFailures.Add(ctx, 1)
	payload, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	path := e.writer.DeadLetterPath(key)
	created := false
	if err == nil {
		path, created, err = e.writer.DeadLetter(key, payload)
	}
	if err != nil {
		e.dropLog.Error("writing a batch failed and it could not be dead-lettered either; the queue retries it, and its cases are lost if the retries run out",
			zap.Strings("case_ids", ids), zap.NamedError("write_error", writeErr), zap.NamedError("dead_letter_error", err))
		return
	}
	if created {
		e.telemetry.ExporterReplayParquetCasesDeadLettered.Add(ctx, int64(len(ids)))
	}
	e.dropLog.Error("writing a batch failed; its cases are dead-lettered and the queue retries it",
		zap.String("dead_letter", path), zap.Strings("case_ids", ids), zap.Error(writeErr))
}

// startFlush starts the loop that publishes staged segments once the oldest is file_max_age
// old, also when no batch arrives to trigger it.
func (e *parquetExporter) startFlush() {
	if e.cfg.FileMaxAge <= 0 {
		return
	}
	e.flushStop, e.flushDone = make(chan struct{}), make(chan struct{})
	tick := time.NewTicker(max(e.cfg.FileMaxAge/4, 100*time.Millisecond))
	go func() {
		defer close(e.flushDone)
		defer tick.Stop()
		for {
			select {
			case <-e.flushStop:
				return
			case <-tick.C:
				e.flush(context.Background(), false)
			}
		}
	}()
}

func (e *parquetExporter) stopFlush() {
	if e.flushStop != nil {
		close(e.flushStop)
		<-e.flushDone
		e.flushStop = nil
	}
}

// flush publishes the staged segments when due (all when force). A failure leaves them staged
// (or committed) for the next flush or the next start; their rows are durable either way.
func (e *parquetExporter) flush(ctx context.Context, force bool) {
	res, err := e.writer.Flush(force)
	if len(res.Files) > 0 {
		e.recordFiles(ctx, res)
		e.upload(ctx, res)
	}
	for _, u := range res.Unreadable {
		rows := 0
		for ds, n := range u.Rows {
			rows += n
			e.telemetry.ExporterReplayParquetRowsSetAside.Add(ctx, int64(n), metric.WithAttributes(attribute.String("dataset", ds)))
		}
		e.dropLog.Error("a staged segment cannot be read: it is set aside in staging and its cases are not published; the other segments are",
			zap.String("segment", u.Path), zap.Int("rows", rows), zap.Error(u.Err))
	}
	if errors.Is(err, dataset.ErrCommitted) {
		// The merged files are published by a later write, flush or start, in no result of
		// theirs: the next upload must look for them, as after push's ErrCommitted.
		e.resyncObjectStore()
	}
	if err != nil {
		e.logger.Error("staged cases could not be published yet; they are durable in staging and published by a later flush or at the next start",
			zap.String("staging_directory", e.cfg.staging()), zap.Error(err))
	}
}

func (e *parquetExporter) recordDecode(ctx context.Context, batch decoded) {
	e.telemetry.ExporterReplayParquetSpansIgnored.Add(ctx, int64(batch.ignored))
	e.telemetry.ExporterReplayParquetCasesIsolated.Add(ctx, int64(batch.isolated))
	for _, c := range batch.cases {
		if c.HasReason(reasonUndecodable) {
			e.dropLog.Warn("case spans could not be decoded; written to quarantine/", zap.String("case_id", c.CaseID),
				zap.String("trace_id", c.Provenance.TraceID), zap.String("detail", c.Reasons[len(c.Reasons)-1].Detail))
		}
	}
	for _, d := range batch.dropped {
		e.telemetry.ExporterReplayParquetSpansDropped.Add(ctx, int64(d.spans))
		e.dropLog.Error("case spans dropped: they cannot be decoded and carry no trace or span id to quarantine them under",
			zap.String("claimed_case_id", d.claimed), zap.Int("spans", d.spans), zap.Error(d.err))
	}
}

// The reason attribute of cases_resent: which check left the cases out.
const (
	reasonResent      = "resent"      // marked by the processor, held by an adopted segment or a recent file (dataset/resent.go)
	reasonRedelivered = "redelivered" // delivered again unchanged by the persistent queue (dataset/redelivered.go)
)

// recordResent counts by reason and logs, with why, the cases a write left out because they
// were sent again after a crash and written before it. Every id is named, on the logger that
// does not sample: a case that is not written must be findable by its id.
func (e *parquetExporter) recordResent(ctx context.Context, ids []string, reason, why string) {
	if len(ids) == 0 {
		return
	}
	e.telemetry.ExporterReplayParquetCasesResent.Add(ctx, int64(len(ids)), metric.WithAttributes(attribute.String("reason", reason)))
	e.dropLog.Warn(why, zap.Int("cases", len(ids)), zap.Strings("case_ids", ids))
}

func (e *parquetExporter) recordFiles(ctx context.Context, res dataset.Result) {
	for _, f := range res.Files {
		attrs := metric.WithAttributes(attribute.String("dataset", f.Dataset))
		e.telemetry.ExporterReplayParquetFilesWritten.Add(ctx, 1, attrs)
		e.telemetry.ExporterReplayParquetRowsWritten.Add(ctx, int64(f.Rows), attrs)
		e.telemetry.ExporterReplayParquetBytesWritten.Add(ctx, f.Bytes, attrs)
	}
}
