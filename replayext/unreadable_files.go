package replayext

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
)

// Why a data file is set aside (files_skipped{reason}).
const skipUnreadable = "unreadable" // its bytes are not a data file this build reads

// setAside reports whether err, the error of reading file, is an error of the file's own bytes
// (not Parquet, a truncated footer, another schema version, a corrupt page): reading it again
// fails the same way, so the refresh does not retry it, and r reports it once. A restart reads
// it again (the lister's memory of the files it listed is this process's).
func (s *store) setAside(r *refreshed, file string, err error) bool {
	if !errors.Is(err, dataset.ErrUnreadable) {
		return false
	}
	delete(s.failing, file)
	if r.unreadable == nil {
		r.unreadable = map[string]error{}
	}
	r.unreadable[file] = err
	return true
}

// noteRead records how reading file ("": listing the files) ended, err nil when it was read.
// Any failure may pass (the disk, a permission, the network) and the file is read again at
// every refresh: r reports its first failure, and the read that succeeds after it, so that a
// file that keeps failing is logged once, not at every refresh. A read the refresh's end cut
// short (its deadline, or shutdown) is not the file's failure.
func (s *store) noteRead(ctx context.Context, r *refreshed, file string, err error) {
	switch {
	case err == nil:
		if s.failing[file] {
			delete(s.failing, file)
			r.read = append(r.read, file)
		}
	case ctx.Err() != nil:
	case !s.failing[file]:
		s.failing[file] = true
		if r.failed == nil {
			r.failed = map[string]error{}
		}
		r.failed[file] = err
	}
}

// logFileReads logs and counts what a refresh could not read, and what it read after all.
func (r *replay) logFileReads(res refreshed) {
	for file, err := range res.unreadable {
		r.telemetry.ExtensionReplayFilesSkipped.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", skipUnreadable)))
		r.set.Logger.Error("set aside a dataset file that is not a data file this build reads: its cases are not served, and it is not read again until the collector restarts",
			zap.String("file", file), zap.Error(err))
	}
	for file, err := range res.failed {
		if file == "" {
			r.set.Logger.Warn("could not list the dataset's files: the new ones are not served until a listing succeeds; listed again at every refresh",
				zap.String("dataset", r.cfg.location()), zap.Error(err))
			continue
		}
		r.set.Logger.Warn("could not read a dataset file: its cases are not served until it is read; read again at every refresh, and logged again once it is",
			zap.String("file", file), zap.Error(err))
	}
	for _, file := range res.read {
		if file == "" {
			r.set.Logger.Info("listed the dataset's files again", zap.String("dataset", r.cfg.location()))
			continue
		}
		r.set.Logger.Info("read a dataset file that could not be read before: its cases are served", zap.String("file", file))
	}
}
