package replayparquetreceiver

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/sharedcomponent"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadata"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

var storageID = teststorage.ID

// caseProcessor is a replay_case processor (traces and logs faces of one instance) in front of
// next.
type caseProcessor struct {
	traces processor.Traces
	logs   processor.Logs
}

func newCaseProcessor(t *testing.T, next consumer.Traces, edit func(*replaycaseprocessor.Config)) caseProcessor {
	t.Helper()
	f := replaycaseprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*replaycaseprocessor.Config)
	cfg.RootGracePeriod = 20 * time.Millisecond
	edit(cfg)
	require.NoError(t, cfg.Validate())
	set := processortest.NewNopSettings(f.Type())
	tp, err := f.CreateTraces(context.Background(), set, cfg, next)
	require.NoError(t, err)
	lp, err := f.CreateLogs(context.Background(), set, cfg, consumer.Logs(nil))
	require.NoError(t, err)
	require.NoError(t, tp.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))
	return caseProcessor{tp, lp}
}

// shutdown flushes every open case.
func (p caseProcessor) shutdown(t *testing.T) {
	require.NoError(t, p.traces.Shutdown(context.Background()))
	require.NoError(t, p.logs.Shutdown(context.Background()))
}

// strict is the default evidence policy: every check.
func strict(*replaycaseprocessor.Config) {}

// relaxed accepts every case that has no lifecycle problem, and copies the re-drive
// provenance into the metadata, as the README tells users to.
func relaxed(c *replaycaseprocessor.Config) {
	c.Evidence.Require = []string{}
	c.Metadata = map[string]string{
		MetaRedrivenFrom:       `resource.attributes["` + AttrRedrivenFrom + `"]`,
		MetaOriginalIngestedAt: `resource.attributes["` + AttrOriginalIngestedAt + `"]`,
	}
}

// capture writes n runs of the fixture into root through a replay_case processor with the
// given policy and the replay_parquet exporter, and returns the case ids written.
func capture(t *testing.T, root, run string, first, n int, policy func(*replaycaseprocessor.Config)) {
	t.Helper()
	exp := testdataset.Writer(t, root, "zstd")
	p := newCaseProcessor(t, exp, policy)
	for i := first; i < first+n; i++ {
		td, ld := testfixtures.Traces(t, run), testfixtures.Logs(t, run)
		testfixtures.WithTraceID(td, ld, i)
		require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
		require.NoError(t, p.traces.ConsumeTraces(context.Background(), td))
	}
	p.shutdown(t)
	require.NoError(t, exp.Shutdown(context.Background()))
}

// rowsOf reads every row of one dataset under root, with the file each came from.
type fileRow struct {
	file string
	c    replaycase.Case
}

func rowsOf(t *testing.T, root, ds string) []fileRow {
	t.Helper()
	files, err := dataset.NewLister(root, ds).Next()
	require.NoError(t, err)
	var out []fileRow
	for _, f := range files {
		rows, err := dataset.ReadCases(f.Path)
		require.NoError(t, err)
		for _, r := range rows {
			out = append(out, fileRow{f.Path, r})
		}
	}
	return out
}

// currentRows is the documented query in Go: over cases/ and quarantine/, the row of each
// case_id in the file whose name (a UUIDv7) sorts last.
func currentRows(t *testing.T, root string) map[string]replaycase.Case {
	all := append(rowsOf(t, root, dataset.Cases), rowsOf(t, root, dataset.Quarantine)...)
	sort.SliceStable(all, func(i, j int) bool { return filepath.Base(all[i].file) < filepath.Base(all[j].file) })
	out := map[string]replaycase.Case{}
	for _, r := range all {
		out[r.c.CaseID] = r.c
	}
	return out
}

// newTestReceiver creates the receiver from its factory, with its drop logger set to set.Logger.
func newTestReceiver(t *testing.T, set receiver.Settings, root string, edit func(*Config), traces consumer.Traces, logs consumer.Logs) (receiver.Traces, *replayReceiver) {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Directory, cfg.Storage = root, &storageID
	cfg.RetryInterval = 10 * time.Millisecond
	edit(cfg)
	require.NoError(t, cfg.Validate())
	tr, err := f.CreateTraces(context.Background(), set, cfg, traces)
	require.NoError(t, err)
	if logs != nil {
		_, err = f.CreateLogs(context.Background(), set, cfg, logs)
		require.NoError(t, err)
	}
	r := tr.(*sharedcomponent.Component[*replayReceiver]).Unwrap()
	r.dropLog = set.Logger // the test's logger has no sampler; a test of sampling gives its own
	return tr, r
}

// The traces and logs faces share one reader: it starts once, and stops at the first face's
// Shutdown, while the consumers of both pipelines still run (the collector shuts a face down
// before what it sends to); the other face's Shutdown is then a no-op, and a reload builds a
// new reader.
func TestSharedReaderStopsWithTheFirstPipelineShutDown(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 2, strict)
	host, ext := teststorage.Start(t, t.TempDir())
	defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()

	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Directory, cfg.Storage, cfg.Mode = root, &storageID, ModeWatch
	set := receivertest.NewNopSettings(metadata.Type)
	traces, logs := new(consumertest.TracesSink), new(consumertest.LogsSink)
	tr, err := f.CreateTraces(context.Background(), set, cfg, traces)
	require.NoError(t, err)
	lr, err := f.CreateLogs(context.Background(), set, cfg, logs)
	require.NoError(t, err)
	r := tr.(*sharedcomponent.Component[*replayReceiver]).Unwrap()
	require.Same(t, r, lr.(*sharedcomponent.Component[*replayReceiver]).Unwrap(), "one reader for both pipelines")

	require.NoError(t, tr.Start(context.Background(), host))
	require.NoError(t, lr.Start(context.Background(), host))
	waitBacklog(t, r)
	require.NoError(t, lr.Shutdown(context.Background()))
	select {
	case <-r.done:
	default:
		t.Fatal("the reader still runs after the first pipeline shut it down")
	}
	require.NoError(t, tr.Shutdown(context.Background()))
	assert.NotZero(t, traces.SpanCount(), "the backlog was pushed before the stop")

	again, err := f.CreateTraces(context.Background(), set, cfg, traces)
	require.NoError(t, err)
	assert.NotSame(t, r, again.(*sharedcomponent.Component[*replayReceiver]).Unwrap(), "a reload gets a new reader")
	require.NoError(t, again.Shutdown(context.Background()))
}

func waitBacklog(t *testing.T, r *replayReceiver) {
	t.Helper()
	select {
	case <-r.backlogDone:
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver did not finish its backlog")
	}
}

// runBacklog runs a receiver with default settings but for the telemetry over root, with a
// fresh storage, until its once-mode backlog is done, and returns the telemetry.
func runBacklog(t *testing.T, root string, traces consumer.Traces, logs consumer.Logs) *componenttest.Telemetry {
	t.Helper()
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	host, ext := teststorage.Start(t, t.TempDir())
	rcv, r := newTestReceiver(t, metadatatest.NewSettings(tt), root, func(*Config) {}, traces, logs)
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
	return tt
}

// The pipeline: cases quarantined by an evidence policy are re-driven with a relaxed
// policy, replay_parquet receiver → replay_case → replay_parquet exporter, and end accepted,
// with their case ids, their provenance, and counts that reconcile.
func TestRedriveQuarantinedCasesWithARelaxedPolicy(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 5, strict)
	capture(t, root, testfixtures.OTelEvents, 100, 2, strict)
	quarantined := rowsOf(t, root, dataset.Quarantine)
	require.Len(t, quarantined, 5, "the strict policy quarantines the runs without content")
	require.Len(t, rowsOf(t, root, dataset.Cases), 2)
	for _, r := range quarantined {
		require.NotEmpty(t, r.c.RawSpans, "quarantined rows keep their raw spans for a re-drive")
		require.NotZero(t, r.c.Provenance.EventCount, "the fixture's content is in log events")
	}

	exp := testdataset.Writer(t, root, "zstd")
	p := newCaseProcessor(t, exp, relaxed)
	tt := runBacklog(t, root, p.traces, p.logs)
	p.shutdown(t)
	require.NoError(t, exp.Shutdown(context.Background()))

	current := currentRows(t, root)
	require.Len(t, current, 7, "a re-driven case keeps its case id: 7 runs, 7 cases")
	for _, q := range quarantined {
		c := current[q.c.CaseID]
		assert.Equal(t, replaycase.StatusAccepted, c.Status, q.c.CaseID)
		assert.Empty(t, c.Reasons)
		rel, _ := filepath.Rel(root, q.file)
		assert.True(t, strings.HasPrefix(c.Metadata[MetaRedrivenFrom], filepath.ToSlash(rel)+"#"), c.Metadata)
		assert.Equal(t, fileTime(filepath.Base(q.file)), c.Metadata[MetaOriginalIngestedAt])
		assert.Equal(t, q.c.StartTime, c.StartTime, "same dt partition as the original row")
		assert.Equal(t, q.c.Provenance.SpanCount, c.Provenance.SpanCount, "every raw span came back")
		assert.Equal(t, q.c.Provenance.EventCount, c.Provenance.EventCount, "every raw log event came back, through the logs pipeline")
	}
	assert.Len(t, rowsOf(t, root, dataset.Cases), 7)
	assert.Len(t, rowsOf(t, root, dataset.Quarantine), 5, "the superseded rows stay; the current-row query hides them")

	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	metadatatest.AssertEqualReceiverReplayParquetCasesSelected(t, tt, []metricdata.DataPoint[int64]{{Value: 5}}, opts...)
	metadatatest.AssertEqualReceiverReplayParquetCasesEmitted(t, tt, []metricdata.DataPoint[int64]{{Value: 5}}, opts...)
	// The processor may close the five cases in one sweep or more (one file each), as the
	// machine's load decides: every quarantine file is read to its end.
	qfiles := map[string]bool{}
	for _, r := range quarantined {
		qfiles[r.file] = true
	}
	metadatatest.AssertEqualReceiverReplayParquetFilesProcessed(t, tt, []metricdata.DataPoint[int64]{{Value: int64(len(qfiles)), Attributes: attribute.NewSet(attribute.String("dataset", "quarantine"))}}, opts...)
}

// traceRecorder is a next consumer that records the trace ids of the pushes it accepts and
// refuses (retryably) every push after the first `accept` pushes (-1: none refused).
type traceRecorder struct {
	mu       sync.Mutex
	accepted []string
	accept   int
	pushes   int // accepted
	refusals int
	refused  chan struct{} // signalled at the second refusal (so the first was retried)
}

func (r *traceRecorder) consume(_ context.Context, td ptrace.Traces) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.accept >= 0 && r.pushes >= r.accept {
		r.refusals++
		if r.refusals == 2 {
			close(r.refused)
		}
		return errRefused
	}
	seen := map[string]bool{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if id := spans.At(k).TraceID().String(); !seen[id] {
					seen[id] = true
					r.accepted = append(r.accepted, id)
				}
			}
		}
	}
	r.pushes++
	return nil
}

var errRefused = &retryableError{}

type retryableError struct{}

func (*retryableError) Error() string { return "queue full (test)" }

// A refused push is retried, and a restart while it is refused neither skips nor repeats a
// case: the checkpoint advances only past pushes the next consumer took.
func TestRestartInTheMiddleEmitsEachCaseOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 5, strict)
	storageDir := t.TempDir()
	batchOf2 := func(c *Config) { c.BatchSize = 2 }

	run := func(rec *traceRecorder, wait func(*replayReceiver)) {
		host, ext := teststorage.Start(t, storageDir)
		next, err := consumer.NewTraces(rec.consume)
		require.NoError(t, err)
		set := receivertest.NewNopSettings(NewFactory().Type())
		set.ID = component.MustNewID("replay_parquet") // the same component across restarts
		rcv, r := newTestReceiver(t, set, root, batchOf2, next, nil)
		require.NoError(t, rcv.Start(context.Background(), host))
		wait(r)
		require.NoError(t, rcv.Shutdown(context.Background()))
		require.NoError(t, ext.Shutdown(context.Background()))
	}

	first := &traceRecorder{accept: 1, refused: make(chan struct{})}
	run(first, func(*replayReceiver) {
		select {
		case <-first.refused:
		case <-time.After(30 * time.Second):
			t.Fatal("the refused push was not retried")
		}
	})
	// One push taken before the refusals: two cases, or one when the five were written in more
	// than one file (the processor closes them in one sweep or more, as the machine's load
	// decides) and the first file holds one.
	require.NotEmpty(t, first.accepted, "one push taken before the refusals")
	require.LessOrEqual(t, len(first.accepted), 2, "one push of batch_size 2")

	second := &traceRecorder{accept: -1}
	run(second, func(r *replayReceiver) { waitBacklog(t, r) })
	third := &traceRecorder{accept: -1}
	run(third, func(r *replayReceiver) { waitBacklog(t, r) })

	all := append(append([]string{}, first.accepted...), second.accepted...)
	assert.Len(t, all, 5)
	distinct := map[string]bool{}
	for _, id := range all {
		distinct[id] = true
	}
	assert.Len(t, distinct, 5, "no case emitted twice across the restart")
	assert.Empty(t, third.accepted, "a third start finds every file done")
}

// emit: cases copies a dataset into another root through the exporter alone, and watch mode
// picks up files published after the start.
func TestEmitCasesCopiesADatasetAndWatchFollowsNewFiles(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "dst")
	capture(t, src, testfixtures.OTelEvents, 1, 2, strict)

	host, ext := teststorage.Start(t, t.TempDir())
	exp := testdataset.Writer(t, dst, "zstd")
	rcv, r := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), src, func(c *Config) {
		c.Emit, c.Mode, c.PollInterval = EmitCases, ModeWatch, 20*time.Millisecond
		c.Select.Datasets = []string{dataset.Cases}
	}, exp, nil)
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	capture(t, src, testfixtures.OTelEvents, 3, 1, strict)
	require.Eventually(t, func() bool { return len(rowsOf(t, dst, dataset.Cases)) == 3 }, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, exp.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))

	assertCopied(t, src, dst)
}

// assertCopied checks that dst holds the cases of src, the same but for their provenance.
func assertCopied(t *testing.T, src, dst string) {
	t.Helper()
	want := map[string]replaycase.Case{}
	for _, r := range rowsOf(t, src, dataset.Cases) {
		want[r.c.CaseID] = r.c
	}
	got := rowsOf(t, dst, dataset.Cases)
	require.Len(t, got, len(want))
	for _, r := range got {
		w, ok := want[r.c.CaseID]
		require.True(t, ok, r.c.CaseID)
		assert.NotEmpty(t, r.c.Metadata[MetaRedrivenFrom])
		assert.NotEmpty(t, r.c.Metadata[MetaOriginalIngestedAt])
		delete(r.c.Metadata, MetaRedrivenFrom)
		delete(r.c.Metadata, MetaOriginalIngestedAt)
		if len(r.c.Metadata) == 0 {
			r.c.Metadata = w.Metadata
		}
		assert.Equal(t, w, r.c, "the copy is the same case but for its provenance")
	}
	steps := stepCount(t, src)
	assert.NotZero(t, steps)
	assert.Equal(t, steps, stepCount(t, dst), "the copy has the steps of the cases it copied")
}

// stepCount is how many rows the steps/ files under root hold.
func stepCount(t *testing.T, root string) int {
	t.Helper()
	files, err := dataset.NewLister(root, dataset.Steps).Next()
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		rows, err := dataset.ReadSteps(f.Path)
		require.NoError(t, err)
		n += len(rows)
	}
	return n
}

// Case spans pass a replay_case processor with trusted_upstream unchanged (as the README says).
func TestEmitCasesThroughATrustedProcessor(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "dst")
	capture(t, src, testfixtures.OTelEvents, 1, 2, strict)
	exp := testdataset.Writer(t, dst, "zstd")
	p := newCaseProcessor(t, exp, func(c *replaycaseprocessor.Config) { c.TrustedUpstream = true })
	host, ext := teststorage.Start(t, t.TempDir())
	rcv, r := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), src, func(c *Config) {
		c.Emit, c.Select.Datasets = EmitCases, []string{dataset.Cases}
	}, p.traces, p.logs)
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
	p.shutdown(t)
	require.NoError(t, exp.Shutdown(context.Background()))
	assertCopied(t, src, dst)
}

// A selected case that cannot be emitted (raw mode, no raw spans kept) is a counted drop.
func TestCaseWithoutRawSpansIsACountedDrop(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 3, func(c *replaycaseprocessor.Config) { c.RawSpans = "none" })
	require.Len(t, rowsOf(t, root, dataset.Quarantine), 3)

	rec := &traceRecorder{accept: -1}
	next, err := consumer.NewTraces(rec.consume)
	require.NoError(t, err)
	tt := runBacklog(t, root, next, nil)

	assert.Empty(t, rec.accepted)
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	metadatatest.AssertEqualReceiverReplayParquetCasesSelected(t, tt, []metricdata.DataPoint[int64]{{Value: 3}}, opts...)
	metadatatest.AssertEqualReceiverReplayParquetCasesDropped(t, tt, []metricdata.DataPoint[int64]{{Value: 3, Attributes: attribute.NewSet(attribute.String("reason", "no_raw_spans"))}}, opts...)
}

// A permanent refusal cannot be helped by retrying: the cases are counted drops, logged, and
// the checkpoint moves on.
func TestPermanentRefusalIsACountedDrop(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 3, strict)

	next, err := consumer.NewTraces(func(context.Context, ptrace.Traces) error {
		return consumererror.NewPermanent(errors.New("schema refused (test)"))
	})
	require.NoError(t, err)
	tt := runBacklog(t, root, next, nil)

	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	metadatatest.AssertEqualReceiverReplayParquetCasesSelected(t, tt, []metricdata.DataPoint[int64]{{Value: 3}}, opts...)
	metadatatest.AssertEqualReceiverReplayParquetCasesEmitted(t, tt, []metricdata.DataPoint[int64]{{Value: 0}}, opts...)
	metadatatest.AssertEqualReceiverReplayParquetCasesDropped(t, tt, []metricdata.DataPoint[int64]{{Value: 3, Attributes: attribute.NewSet(attribute.String("reason", "permanent_error"))}}, opts...)
}

// One case the next consumer refuses permanently is dropped alone: the other cases of its
// batch are pushed and taken.
func TestPermanentRefusalOfOneCaseDropsOnlyThatCase(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 3, strict)
	const bad = "000002000000000000000000000000ee"

	rec := &traceRecorder{accept: -1}
	next, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					if ss.At(j).Spans().At(k).TraceID().String() == bad {
						return consumererror.NewPermanent(errors.New("one span refused (test)"))
					}
				}
			}
		}
		return rec.consume(ctx, td)
	})
	require.NoError(t, err)
	tt := runBacklog(t, root, next, nil)

	sort.Strings(rec.accepted)
	assert.Equal(t, []string{"000001000000000000000000000000ee", "000003000000000000000000000000ee"}, rec.accepted)
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	metadatatest.AssertEqualReceiverReplayParquetCasesSelected(t, tt, []metricdata.DataPoint[int64]{{Value: 3}}, opts...)
	metadatatest.AssertEqualReceiverReplayParquetCasesEmitted(t, tt, []metricdata.DataPoint[int64]{{Value: 2}}, opts...)
	metadatatest.AssertEqualReceiverReplayParquetCasesDropped(t, tt, []metricdata.DataPoint[int64]{{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "permanent_error"))}}, opts...)
}

// The raw log events of a case whose spans are emitted, and that do not reach a logs consumer
// (the receiver is in no logs pipeline, or the next logs consumer refuses them permanently),
// are counted in events_dropped by reason. Before, they were only logged with the case ids: the
// re-driven cases lost their content without a count.
func TestRawEventsNotEmittedAreCountedDrops(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 3, strict)
	var events int64
	for _, r := range rowsOf(t, root, dataset.Quarantine) {
		events += r.c.Provenance.EventCount
	}
	require.NotZero(t, events, "the fixture's content is in log events")
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}

	t.Run("no logs pipeline", func(t *testing.T) {
		traces := new(consumertest.TracesSink)
		tt := runBacklog(t, root, traces, nil)
		assert.NotZero(t, traces.SpanCount(), "the spans are emitted")
		metadatatest.AssertEqualReceiverReplayParquetCasesEmitted(t, tt, []metricdata.DataPoint[int64]{{Value: 3}}, opts...)
		metadatatest.AssertEqualReceiverReplayParquetEventsDropped(t, tt, []metricdata.DataPoint[int64]{
			{Value: events, Attributes: attribute.NewSet(attribute.String("reason", "no_logs_pipeline"))},
		}, opts...)
	})
	t.Run("permanent refusal", func(t *testing.T) {
		traces := new(consumertest.TracesSink)
		logs, err := consumer.NewLogs(func(context.Context, plog.Logs) error {
			return consumererror.NewPermanent(errors.New("events refused (test)"))
		})
		require.NoError(t, err)
		tt := runBacklog(t, root, traces, logs)
		metadatatest.AssertEqualReceiverReplayParquetCasesEmitted(t, tt, []metricdata.DataPoint[int64]{{Value: 3}}, opts...)
		metadatatest.AssertEqualReceiverReplayParquetEventsDropped(t, tt, []metricdata.DataPoint[int64]{
			{Value: events, Attributes: attribute.NewSet(attribute.String("reason", "permanent_error"))},
		}, opts...)
	})
}
