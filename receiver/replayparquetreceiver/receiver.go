package replayparquetreceiver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/droplog"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadata"
)

// replayReceiver reads case rows from a dataset and pushes them to the next consumers. One
// goroutine reads the files in order; for each file it continues after the rows its
// checkpoint says were handled, and advances the checkpoint after every push the next
// consumer accepted.
type replayReceiver struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	// dropLog names, unsampled (internal/droplog), every case, event, row or file not emitted.
	dropLog   *zap.Logger
	telemetry *metadata.TelemetryBuilder

	nextTraces consumer.Traces
	nextLogs   consumer.Logs // nil when the component is in no logs pipeline

	files       files // where the dataset is read
	checkpoints *checkpoints
	cancel      context.CancelFunc
	done        chan struct{}
	// backlogDone is closed when once mode has handled every file present at start (tests
	// wait on it).
	backlogDone chan struct{}
	progress    *backlogProgress // made by run; only run's goroutine uses it
}

func newReceiver(set receiver.Settings, cfg *Config) (*replayReceiver, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &replayReceiver{cfg: cfg, id: set.ID, logger: set.Logger, dropLog: droplog.New(set.ID, "receiver"), telemetry: tb, backlogDone: make(chan struct{})}, nil
}

// openFiles opens where the dataset is read; a variable so that a test can see it closed.
var openFiles = newFiles

func (r *replayReceiver) Start(ctx context.Context, host component.Host) error {
	if r.nextTraces == nil {
		return errors.New("replay_parquet must be in a traces pipeline: cases are emitted as spans (raw log events go to its logs pipeline)")
	}
	source, err := openFiles(ctx, r.cfg)
	if err != nil {
		return err
	}
	cp, err := openCheckpoints(ctx, host, *r.cfg.Storage, r.id, r.cfg.rowSelection())
	if err != nil {
		// A failed Start leaves nothing open: Shutdown closes files only after a run started,
		// and the collector may not call it at all.
		source.close()
		return err
	}
	r.files, r.checkpoints = source, cp
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go r.run(runCtx)
	return nil
}

// Shutdown stops reading. A push in progress is abandoned without advancing its checkpoint,
// so the next start pushes those cases again rather than skipping them.
func (r *replayReceiver) Shutdown(ctx context.Context) error {
	if r.cancel == nil {
		r.telemetry.Shutdown()
		return nil
	}
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.files.close()
	r.telemetry.Shutdown()
	return r.checkpoints.close(ctx)
}

func (r *replayReceiver) run(ctx context.Context) {
	defer close(r.done)
	lister := r.files
	var pending []dataset.File // listed files not read yet, in order
	backlog, listed := true, false
	selected := 0 // files listed and selected so far
	r.progress = newBacklogProgress(r.logger, r.cfg.location(), time.Now())
	for {
		// Once mode reads what is present at start: it lists until a listing succeeds, then
		// only retries the files it could not read.
		if r.cfg.Mode == ModeWatch || !listed {
			files, err := lister.next(ctx)
			if err != nil {
				r.logger.Warn("listing the dataset; listing again at the next poll", zap.String("dataset", r.cfg.location()), zap.Error(err))
			}
			listed = err == nil
			for _, f := range files {
				if r.cfg.Select.selectsFile(f) {
					pending = append(pending, f)
					selected++
				}
			}
			// The lister orders files by dataset first: a copy (emit: cases) of cases/ and
			// quarantine/ would write a case's old quarantine row after its re-driven accepted
			// row, and make it the copy's current row.
			dataset.InWriteOrder(pending)
		}
		var failed []dataset.File
		for _, f := range pending {
			err := r.processFile(ctx, f)
			if err == nil || ctx.Err() == nil && r.skipped(ctx, f, err) {
				if backlog {
					r.progress.fileRead(selected, time.Now())
				}
				continue
			}
			if ctx.Err() != nil {
				return // shutdown, also while the checkpoint of a file set aside was being saved
			}
			failed = append(failed, f)
			r.logger.Error("reading a data file; it is read again at the next poll", zap.String("file", f.Path), zap.Error(err))
		}
		pending = failed
		if backlog && listed && len(pending) == 0 {
			backlog = false
			close(r.backlogDone)
			if r.cfg.Mode == ModeOnce {
				if selected == 0 {
					// An empty dataset, or a wrong bucket prefix (which lists nothing, as an
					// empty one does), or select.from/to naming days without files.
					r.logger.Warn("replay_parquet: backlog done (mode: once) without a file to read: the dataset has no data file of select.datasets (within select.from and select.to)",
						zap.String("dataset", r.cfg.location()), zap.Strings("datasets", r.cfg.Select.Datasets))
					return
				}
				r.logger.Info("replay_parquet: backlog done (mode: once); no further files are read", r.progress.totals(selected)...)
				return
			}
			r.logger.Info("replay_parquet: backlog done (mode: watch); files published from now on are read as they appear", r.progress.totals(selected)...)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.cfg.PollInterval):
		}
	}
}

// processFile emits the selected rows of one file that its checkpoint does not cover,
// decoding batch_size rows at a time. The rows a corrupt page makes unreadable are passed over
// (counted and logged with the checkpoint that passes them); the file is then set aside by
// skipped, once every row it could read was emitted.
func (r *replayReceiver) processFile(ctx context.Context, f dataset.File) error {
	src := sourceOf(f)
	done, setAside, err := r.checkpoints.rowsDone(ctx, src.rel)
	if err != nil || setAside {
		return err
	}
	// A copy marks resent the rows of a push the collector may have died in (checkpoints.inFlight).
	// recorded is how many selected rows from first the stored record of a push in flight covers.
	copying, resend, recorded := r.cfg.Emit == EmitCases, 0, 0
	if copying {
		if resend, err = r.checkpoints.inFlight(ctx, src.rel, done); err != nil {
			return err
		}
		recorded = resend
	}
	b, selected, next, first := newBatch(), 0, done, done
	var lost []rowsLost // since the last checkpoint
	flush := func(through int64) error {
		// Before a push, the record must cover its rows (the first push of the file in this run,
		// or one larger than the record found: batch_size raised since the last stop) and still
		// the rows of a push in flight at the last stop, which that push may have written.
		if copying && len(b.caseIDs) > 0 && recorded < selected {
			rows := max(r.cfg.BatchSize, recorded)
			if err := r.saveCheckpoint(ctx, src.rel, func() error { return r.checkpoints.setInFlight(ctx, src.rel, first, rows) }); err != nil {
				return fmt.Errorf("recording the push from row %d before it (nothing was pushed): %w", first, err)
			}
		}
		if err := r.push(ctx, b); err != nil {
			return err
		}
		save := func() error { return r.checkpoints.setRowsDone(ctx, src.rel, through) }
		if copying {
			// The rows of a push in flight at the last stop not pushed yet stay in flight too: with
			// batch_size lowered since, they outlast this push, and a kill before they are pushed
			// must find them recorded, or the exporter writes them a second time.
			recorded = max(r.cfg.BatchSize, resend)
			save = func() error { return r.checkpoints.setRowsDoneAfterPush(ctx, src.rel, through, recorded) }
		}
		if err := r.saveCheckpoint(ctx, src.rel, save); err != nil {
			return fmt.Errorf("saving the checkpoint after row %d (those cases were emitted and may be emitted again after a restart): %w", through, err)
		}
		r.account(ctx, b, selected)
		r.accountLost(ctx, f, lost)
		b, selected, lost, first = newBatch(), 0, nil, through
		return nil
	}
	err = r.files.scan(ctx, f, done, r.cfg.BatchSize, func(row int64, c *dataset.CaseRow) error {
		next = row + 1
		if !r.cfg.Select.selectsCase(c) {
			return nil
		}
		selected++
		if resend > 0 { // pushed before a stop: written, or not, by the exporter
			c.Resent, resend = true, resend-1
		}
		b.add(c, r.cfg.Emit, src, row)
		if b.size() >= r.cfg.BatchSize {
			return flush(next)
		}
		return nil
	}, func(from, to int64, err error) {
		next = to
		lost = append(lost, rowsLost{from, to, err})
	})
	if errors.Is(err, dataset.ErrUnreadable) && next > done {
		// A corrupt page: the rows read, and those passed over, are checkpointed before the
		// file is set aside (skipped).
		if ferr := flush(next); ferr != nil {
			return ferr
		}
	}
	if err != nil {
		return err
	}
	if next == done {
		return nil // read to the end before
	}
	if err := flush(next); err != nil {
		return err
	}
	r.telemetry.ReceiverReplayParquetFilesProcessed.Add(ctx, 1, metric.WithAttributes(attribute.String("dataset", f.Dataset)))
	return nil
}

// saveCheckpoint saves the checkpoint of a file (save: the rows handled, once the next consumer
// took them, or that the file is set aside). A failed save is retried every retry_interval
// until it succeeds or shutdown: giving up on the file instead would read it again from the
// old checkpoint at the next poll, and push a second time the cases just taken.
func (r *replayReceiver) saveCheckpoint(ctx context.Context, rel string, save func() error) error {
	for {
		err := save()
		if err == nil {
			return nil
		}
		r.logger.Warn("saving the checkpoint of a data file; saving again", zap.String("file", rel), zap.Error(err))
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(r.cfg.RetryInterval):
		}
	}
}

// account counts a batch once its checkpoint is saved, so that counts over restarts add up to
// the rows selected.
func (r *replayReceiver) account(ctx context.Context, b *batch, selected int) {
	r.telemetry.ReceiverReplayParquetCasesSelected.Add(ctx, int64(selected))
	r.telemetry.ReceiverReplayParquetCasesEmitted.Add(ctx, int64(len(b.caseIDs)))
	r.progress.casesEmitted(len(b.caseIDs))
	for _, d := range b.dropped {
		r.telemetry.ReceiverReplayParquetCasesDropped.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", d.reason)))
		r.dropLog.Warn("replay case dropped", zap.String("case_id", d.caseID), zap.String("reason", d.reason), zap.String("detail", d.detail))
	}
}

// push hands the batch to the next consumers: log events first, so that replay_case holds a
// case's events when its spans arrive. A retryable refusal is retried until taken or until
// shutdown; a permanent one drops the batch's cases (counted and logged by account).
func (r *replayReceiver) push(ctx context.Context, b *batch) error {
	if b.logs.LogRecordCount() > 0 {
		if r.nextLogs == nil {
			r.dropEvents(ctx, b, "no_logs_pipeline")
			r.dropLog.Warn("the raw log events of these cases are not emitted: replay_parquet is in no logs pipeline", zap.Strings("case_ids", b.caseIDs))
		} else if err := r.retry(ctx, func() error {
			ld := plog.NewLogs()
			b.logs.CopyTo(ld)
			return r.nextLogs.ConsumeLogs(ctx, ld)
		}); err != nil {
			if !consumererror.IsPermanent(err) {
				return err
			}
			r.dropEvents(ctx, b, "permanent_error")
			r.dropLog.Error("the next consumer refused the raw log events of these cases permanently; their spans are still emitted", zap.Strings("case_ids", b.caseIDs), zap.Error(err))
		}
	}
	if len(b.caseIDs) == 0 {
		return nil
	}
	err := r.retry(ctx, func() error {
		td := ptrace.NewTraces()
		b.traces.CopyTo(td)
		return r.nextTraces.ConsumeTraces(ctx, td)
	})
	if err != nil && consumererror.IsPermanent(err) {
		return r.pushOneByOne(ctx, b, err)
	}
	return err
}

// dropEvents counts the raw log events of batch b that are not emitted, for reason; the
// caller logs them with the batch's case ids.
func (r *replayReceiver) dropEvents(ctx context.Context, b *batch, reason string) {
	r.telemetry.ReceiverReplayParquetEventsDropped.Add(ctx, int64(b.logs.LogRecordCount()), metric.WithAttributes(attribute.String("reason", reason)))
}

// pushOneByOne pushes the cases of a batch the next consumer refused permanently one at a
// time, so that the case it cannot take is dropped (counted and logged by account) and not
// the other cases of its batch. A batch of one case is dropped at once.
func (r *replayReceiver) pushOneByOne(ctx context.Context, b *batch, batchErr error) error {
	if len(b.caseIDs) == 1 {
		b.drop(b.caseIDs[0], "permanent_error", batchErr.Error())
		b.caseIDs = nil
		return nil
	}
	var taken []string
	for i, id := range b.caseIDs {
		err := r.retry(ctx, func() error { return r.nextTraces.ConsumeTraces(ctx, b.caseTraces(i)) })
		switch {
		case err == nil:
			taken = append(taken, id)
		case consumererror.IsPermanent(err):
			b.drop(id, "permanent_error", err.Error())
		default:
			return err // shutdown: the checkpoint stays before the batch
		}
	}
	b.caseIDs = taken
	return nil
}

// retry calls consume (with a fresh copy of the data each time, since a consumer may have
// changed what it refused) until it succeeds, fails permanently or ctx ends.
func (r *replayReceiver) retry(ctx context.Context, consume func() error) error {
	for {
		err := consume()
		if err == nil || consumererror.IsPermanent(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.telemetry.ReceiverReplayParquetPushRetries.Add(ctx, 1)
		r.logger.Debug("the next consumer refused a push; retrying", zap.Error(err))
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(r.cfg.RetryInterval):
		}
	}
}
