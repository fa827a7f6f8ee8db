package replayparquetreceiver

import (
	"time"

	"go.uber.org/zap"
)

// progressInterval is how often the reading of a backlog logs how far it is. A re-drive or copy
// of a large dataset runs for minutes or hours with nothing else to show on the console but
// metrics; a variable so that a test can log at every file.
var progressInterval = 30 * time.Second

// backlogProgress logs, at most once a progressInterval while the files present at start are
// read, how many of them were read and how many cases were emitted so far. Only run's
// goroutine uses it.
type backlogProgress struct {
	logger  *zap.Logger
	dataset string
	start   time.Time
	last    time.Time
	read    int   // files of the backlog read (to the end, set aside or removed)
	emitted int64 // cases the next consumer took since the start
}

func newBacklogProgress(logger *zap.Logger, dataset string, now time.Time) *backlogProgress {
	return &backlogProgress{logger: logger, dataset: dataset, start: now, last: now}
}

// casesEmitted counts cases the next consumer took.
func (p *backlogProgress) casesEmitted(n int) { p.emitted += int64(n) }

// fileRead counts one more backlog file read out of selected, logging when the interval has
// passed.
func (p *backlogProgress) fileRead(selected int, now time.Time) {
	p.read++
	if now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	p.logger.Info("replay_parquet: reading the backlog",
		zap.String("dataset", p.dataset), zap.Int("files_read", p.read), zap.Int("files_selected", selected),
		zap.Int64("cases_emitted", p.emitted), p.elapsed(now))
}

// totals are the fields of the line that ends a backlog of files selected files.
func (p *backlogProgress) totals(files int) []zap.Field {
	return []zap.Field{zap.String("dataset", p.dataset), zap.Int("files", files), zap.Int64("cases_emitted", p.emitted), p.elapsed(time.Now())}
}

func (p *backlogProgress) elapsed(now time.Time) zap.Field {
	return zap.Duration("elapsed", now.Sub(p.start).Round(time.Second))
}
