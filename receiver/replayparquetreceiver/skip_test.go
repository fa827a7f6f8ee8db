package replayparquetreceiver

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadatatest"
)

const filesSkipped = "otelcol_receiver_replay_parquet_files_skipped"

// observedRun is one once-mode run of the receiver over root, as component id replay_parquet
// with the storage in storageDir and its config changed by edit, until its backlog is done.
type observedRun struct {
	accepted []string
	logs     *observer.ObservedLogs
	tt       *componenttest.Telemetry
}

func runObserved(t *testing.T, root, storageDir string, edit func(*Config), next func(*traceRecorder) consumer.Traces) observedRun {
	t.Helper()
	rec := &traceRecorder{accept: -1}
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	core, logs := observer.New(zap.InfoLevel)
	set := metadatatest.NewSettings(tt)
	set.Logger = zap.New(core)
	set.ID = component.MustNewID("replay_parquet") // the same component across restarts
	host, ext := teststorage.Start(t, storageDir)
	rcv, r := newTestReceiver(t, set, root, edit, next(rec), nil)
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
	return observedRun{rec.accepted, logs, tt}
}

func noEdit(*Config) {}

func recorded(rec *traceRecorder) consumer.Traces {
	next, _ := consumer.NewTraces(rec.consume)
	return next
}

// A file whose bytes are not a data file this build reads fails the same way at every read:
// once mode sets it aside (logged once with its path and why, counted, recorded in the
// checkpoint) and finishes its backlog with the readable files' cases; a restart does not read
// it again.
func TestUnreadableFileIsSetAsideOnceAndCounted(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 2, strict)
	// One file, or one per case when the processor closed them in two sweeps.
	files, err := dataset.NewLister(root, dataset.Quarantine).Next()
	require.NoError(t, err)
	good, err := os.ReadFile(files[0].Path)
	require.NoError(t, err)
	dir := filepath.Dir(files[0].Path)
	notParquet := filepath.Join(dir, "part-00000000-0000-7000-8000-000000000000.zstd.parquet")
	truncated := filepath.Join(dir, "part-00000000-0000-7000-8000-000000000001.zstd.parquet")
	require.NoError(t, os.WriteFile(notParquet, []byte("not parquet"), 0o644))
	require.NoError(t, os.WriteFile(truncated, good[:len(good)/2], 0o644))
	storageDir := t.TempDir()

	first := runObserved(t, root, storageDir, noEdit, recorded)
	assert.Len(t, first.accepted, 2, "the readable file's cases")
	setAside := first.logs.FilterMessageSnippet("not a data file this build reads").All()
	require.Len(t, setAside, 2, "each logged once")
	for i, path := range []string{notParquet, truncated} {
		assert.Equal(t, zap.ErrorLevel, setAside[i].Level)
		assert.Equal(t, path, setAside[i].ContextMap()["file"])
		assert.Contains(t, setAside[i].ContextMap()["error"], "magic", "the reason")
	}
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	metadatatest.AssertEqualReceiverReplayParquetFilesSkipped(t, first.tt, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("dataset", "quarantine"), attribute.String("reason", "unreadable"))},
	}, opts...)
	metadatatest.AssertEqualReceiverReplayParquetFilesProcessed(t, first.tt, []metricdata.DataPoint[int64]{
		{Value: int64(len(files)), Attributes: attribute.NewSet(attribute.String("dataset", "quarantine"))},
	}, opts...)

	again := runObserved(t, root, storageDir, noEdit, recorded)
	assert.Empty(t, again.accepted)
	assert.Empty(t, again.logs.FilterMessageSnippet("not a data file this build reads").All(), "not read, nor logged, again")
	assert.Empty(t, again.logs.FilterLevelExact(zap.ErrorLevel).All())
	_, err = again.tt.GetMetric(filesSkipped)
	assert.Error(t, err, "not counted again")
}

// A file whose bytes made the reader panic or allocate what its footer claims, or that it took
// for a failed read, is set aside as any other unreadable file, and the collector keeps running
// (found by dataset's FuzzACorruptFileIsReadOrRefused): a footer placing a column chunk's offset
// index at a negative length panicked in parquet-go (makeslice: len out of range), and a file of
// the magic bytes and three more was read at offset -1, a failed read retried at every poll, so
// once mode never finished its backlog. A footer with a column index out of place (which only
// filters) is read: its cases are emitted.
func TestAFileThatMadeTheReaderPanicIsSetAside(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 2, strict)
	files, err := dataset.NewLister(root, dataset.Quarantine).Next()
	require.NoError(t, err)
	require.Len(t, files, 1)
	dir := filepath.Dir(files[0].Path)
	forged := filepath.Join(dir, "part-00000000-0000-7000-8000-000000000000.zstd.parquet")
	tiny := filepath.Join(dir, "part-00000000-0000-7000-8000-000000000001.zstd.parquet")
	good, err := os.ReadFile(files[0].Path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(forged, good, 0o644))
	testdataset.EditFooter(t, forged, func(m *format.FileMetaData) { m.RowGroups[0].Columns[0].OffsetIndexLength = -1 })
	require.NoError(t, os.WriteFile(tiny, []byte("PAR1\x15\x00\x15"), 0o644))
	// The file with the case: its column index forged the same way.
	testdataset.EditFooter(t, files[0].Path, func(m *format.FileMetaData) { m.RowGroups[0].Columns[0].ColumnIndexLength = -1 })

	run := runObserved(t, root, t.TempDir(), noEdit, recorded)
	assert.Len(t, run.accepted, 2, "the cases of the file whose column index is out of place")
	setAside := run.logs.FilterMessageSnippet("not a data file this build reads").All()
	require.Len(t, setAside, 2, "each logged once")
	for i, path := range []string{forged, tiny} {
		assert.Equal(t, path, setAside[i].ContextMap()["file"])
	}
	assert.Contains(t, setAside[0].ContextMap()["error"], "offset index")
	assert.Contains(t, setAside[1].ContextMap()["error"], "shorter than a Parquet footer")
	metadatatest.AssertEqualReceiverReplayParquetFilesSkipped(t, run.tt, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("dataset", "quarantine"), attribute.String("reason", "unreadable"))},
	}, metricdatatest.IgnoreTimestamp())
}

// captureThenOneMore quarantines two cases, then a third one in a file of its own, read last,
// and returns the root and that last file.
func captureThenOneMore(t *testing.T) (root string, last dataset.File) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 2, strict)
	time.Sleep(5 * time.Millisecond) // the third case's file is named (UUIDv7) and so read last
	capture(t, root, testfixtures.OTelNoContent, 3, 1, strict)
	listed, err := dataset.NewLister(root, dataset.Quarantine).Next()
	require.NoError(t, err)
	return root, listed[len(listed)-1]
}

// failingScans is the receiver's files, failing the scan of one file with an I/O error at row
// failFrom (0: its first row) while failing is set, as a disk or a network that goes away.
type failingScans struct {
	files
	path     string
	failFrom int64
	failing  *atomic.Bool
	scans    *atomic.Int32
}

func (f failingScans) scan(ctx context.Context, file dataset.File, from int64, rowsPerRead int, fn func(row int64, c *dataset.CaseRow) error, lost func(from, to int64, err error)) error {
	if file.Path != f.path {
		return f.files.scan(ctx, file, from, rowsPerRead, fn, lost)
	}
	f.scans.Add(1)
	return f.files.scan(ctx, file, from, rowsPerRead, func(row int64, c *dataset.CaseRow) error {
		if row >= f.failFrom && f.failing.Load() {
			return fmt.Errorf("%s: %w", file.Path, &fs.PathError{Op: "read", Path: file.Path, Err: syscall.EIO})
		}
		return fn(row, c)
	}, lost)
}

// retriedWhileFailing runs the receiver over root in once mode, a row a batch, while the scans
// of the file at path fail at row failFrom: it checks that the file is read again at each poll
// and that the backlog is not done meanwhile, then lets the scans succeed. It returns the
// traces emitted while they failed and in all, and the receiver's telemetry.
func retriedWhileFailing(t *testing.T, root, path string, failFrom int64) (meanwhile, accepted []string, tt *componenttest.Telemetry) {
	t.Helper()
	var failing atomic.Bool
	var scans atomic.Int32
	failing.Store(true)
	defer func(orig func(context.Context, *Config) (files, error)) { openFiles = orig }(openFiles)
	openFiles = func(ctx context.Context, cfg *Config) (files, error) {
		f, err := newFiles(ctx, cfg)
		return failingScans{f, path, failFrom, &failing, &scans}, err
	}

	tt = componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	host, ext := teststorage.Start(t, t.TempDir())
	rec := &traceRecorder{accept: -1}
	rcv, r := newTestReceiver(t, metadatatest.NewSettings(tt), root, func(c *Config) {
		c.PollInterval, c.BatchSize = 10*time.Millisecond, 1
	}, recorded(rec), nil)
	require.NoError(t, rcv.Start(context.Background(), host))
	require.Eventually(t, func() bool { return scans.Load() >= 3 }, 30*time.Second, 10*time.Millisecond, "the file read again at each poll")
	select {
	case <-r.backlogDone:
		t.Fatal("the backlog is not done while a file of it cannot be read")
	default:
	}
	rec.mu.Lock()
	meanwhile = slices.Clone(rec.accepted)
	rec.mu.Unlock()
	failing.Store(false)
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
	return meanwhile, rec.accepted, tt
}

// A file that fails to be read (the disk, a permission, the network) may be read later: it is
// read again every poll_interval, never set aside, and once mode does not call its backlog done
// while it fails; the readable files are emitted meanwhile.
func TestFileReadErrorIsRetriedNotSkipped(t *testing.T) {
	root, last := captureThenOneMore(t)
	meanwhile, accepted, tt := retriedWhileFailing(t, root, last.Path, 0)
	assert.Len(t, meanwhile, 2, "the first two cases")
	assert.Len(t, accepted, 3)
	_, err := tt.GetMetric(filesSkipped)
	assert.Error(t, err, "a read error is not a skipped file")
}

// A read that fails in the middle of a file's rows is retried too, from the first row not
// emitted; once it succeeds, every row is emitted once.
func TestReadErrorMidFileIsRetried(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	path, rows := rowGroupsFile(t, root, 6, 3)
	var want []string
	for _, c := range rows {
		want = append(want, c.Provenance.TraceID)
	}
	meanwhile, accepted, tt := retriedWhileFailing(t, root, path, 1)
	assert.Equal(t, want[:1], meanwhile, "the row before the failing read")
	assert.Equal(t, want, accepted, "each row once, in order")
	_, err := tt.GetMetric(filesSkipped)
	assert.Error(t, err, "a read error is not a skipped file")
}

// A file removed from the dataset before it was read (retention, an operator) is logged once
// and counted, and once mode still finishes its backlog.
func TestFileRemovedBeforeItIsReadIsCounted(t *testing.T) {
	root, last := captureThenOneMore(t)

	// The third case's file is removed while the first cases are pushed: after the listing,
	// before the receiver opens it.
	removeLast := func(rec *traceRecorder) consumer.Traces {
		next, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
			if err := os.Remove(last.Path); err != nil && !os.IsNotExist(err) {
				return err
			}
			return rec.consume(ctx, td)
		})
		return next
	}
	run := runObserved(t, root, t.TempDir(), noEdit, removeLast)
	assert.Len(t, run.accepted, 2)
	removed := run.logs.FilterMessage("a data file was removed before it was read; its rows are not emitted").All()
	require.Len(t, removed, 1, "logged once")
	assert.Equal(t, last.Path, removed[0].ContextMap()["file"])
	metadatatest.AssertEqualReceiverReplayParquetFilesSkipped(t, run.tt, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("dataset", "quarantine"), attribute.String("reason", "removed"))},
	}, metricdatatest.IgnoreTimestamp())
}
