package replayparquetreceiver

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor"
)

// dyingStorage is a file_storage whose writes fail once dead is set: the collector is gone for
// what it would save, while what it saved before stays on disk.
type dyingStorage struct {
	component.Component
	real storage.Extension
	dead *atomic.Bool
}

func (s dyingStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := s.real.GetClient(ctx, kind, id, name)
	return dyingClient{c, s.dead}, err
}

type dyingClient struct {
	storage.Client
	dead *atomic.Bool
}

var errDead = errors.New("the collector was killed (test)")

func (c dyingClient) Set(ctx context.Context, key string, value []byte) error {
	if c.dead.Load() {
		return errDead
	}
	return c.Client.Set(ctx, key, value)
}

func (c dyingClient) Delete(ctx context.Context, key string) error {
	if c.dead.Load() {
		return errDead
	}
	return c.Client.Delete(ctx, key)
}

func (c dyingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		if op.Type != storage.Get && c.dead.Load() {
			return errDead
		}
	}
	return c.Client.Batch(ctx, ops...)
}

type dyingHost struct {
	teststorage.Host
	ext dyingStorage
}

func (h dyingHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{storageID: h.ext}
}

// copyLife is one life of a copy collector (emit: cases) from src into dst: a receiver, the
// replay_parquet exporter, and a file_storage in storageDir, all the same across lives.
type copyLife struct {
	t          *testing.T
	src, dst   string
	storageDir string
	edit       func(*Config)
}

// run starts a life whose exporter sees each push through push (nil: straight), waits with
// wait, and stops it; dead makes the storage's writes fail from when it is set.
func (l copyLife) run(push func(exp exporter.Traces, ctx context.Context, td ptrace.Traces) error, dead *atomic.Bool, wait func(*replayReceiver)) {
	t := l.t
	host, ext := teststorage.Start(t, l.storageDir)
	exp := testdataset.Writer(t, l.dst, "zstd")
	next := consumer.Traces(exp)
	if push != nil {
		var err error
		next, err = consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error { return push(exp, ctx, td) })
		require.NoError(t, err)
	}
	if dead == nil {
		dead = &atomic.Bool{}
	}
	set := receivertest.NewNopSettings(NewFactory().Type())
	set.ID = component.MustNewID("replay_parquet") // the same component across restarts
	rcv, r := newTestReceiver(t, set, l.src, func(c *Config) {
		c.Emit, c.BatchSize = EmitCases, 2
		c.Select.Datasets = []string{dataset.Cases, dataset.Quarantine}
		if l.edit != nil {
			l.edit(c)
		}
	}, next, nil)
	require.NoError(t, rcv.Start(context.Background(), dyingHost{host, dyingStorage{ext, ext.(storage.Extension), dead}}))
	wait(r)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, exp.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
}

// copyOfFiveCases is a copy of five accepted cases into another root, with the rows of each
// case_id in the source.
func copyOfFiveCases(t *testing.T) (copyLife, map[string]int) {
	src, dst := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "dst")
	capture(t, src, testfixtures.OTelEvents, 1, 5, strict)
	want := copiedRowsByID(t, src)
	require.Len(t, want, 5)
	return copyLife{t: t, src: src, dst: dst, storageDir: t.TempDir()}, want
}

// restartsAndFinishes runs a life that copies the rest of the backlog.
func (l copyLife) restartsAndFinishes() {
	l.run(nil, nil, func(r *replayReceiver) { waitBacklog(l.t, r) })
}

// copiedRowsByID counts the rows of each case_id in both datasets of root.
func copiedRowsByID(t *testing.T, root string) map[string]int {
	n := map[string]int{}
	for _, r := range append(rowsOf(t, root, dataset.Cases), rowsOf(t, root, dataset.Quarantine)...) {
		n[r.c.CaseID]++
	}
	return n
}

// A copy (emit: cases) killed after the exporter took a push and before the receiver saved
// the checkpoint after it pushes that batch again after the restart: the batch was written
// twice. The receiver records the push in flight before it pushes; the restart marks the
// batch's cases resent, and the exporter leaves out those it finds written.
func TestACopyKilledBetweenAPushAndItsCheckpointWritesNoCaseTwice(t *testing.T) {
	life, want := copyOfFiveCases(t)

	require.True(t, life.diesAt(1, diesAfterWrite)) // killed once the exporter wrote the first push: its checkpoint is not saved
	require.NotEmpty(t, copiedRowsByID(t, life.dst), "the exporter wrote the first push before the kill")

	life.restartsAndFinishes()
	assert.Equal(t, want, copiedRowsByID(t, life.dst), "every case of src once in the copy")
}

// A copy killed in a push of 4 cases and restarted with batch_size 1 pushes those 4 again one
// at a time, marked resent. Killed again after the second of them, the push in flight it
// recorded must still cover the two the first life wrote and this one has not pushed yet: a
// record of one push of batch_size rows would leave them unmarked, and the exporter would
// write them a second time.
func TestACopyWhoseBatchSizeWasLoweredAcrossTwoKillsWritesNoCaseTwice(t *testing.T) {
	life, want := copyOfFiveCases(t)
	life.edit = func(c *Config) { c.BatchSize = 4 }
	require.True(t, life.diesAt(1, diesAfterWrite))
	require.Len(t, copiedRowsByID(t, life.dst), 4, "the first life wrote its push of 4")

	life.edit = func(c *Config) { c.BatchSize = 1 }
	require.True(t, life.diesAt(2, diesAfterWrite))

	life.restartsAndFinishes()
	assert.Equal(t, want, copiedRowsByID(t, life.dst), "every case of src once in the copy")
}

// A push recorded in flight that the exporter never took (the collector died before it): its
// cases, marked resent after the restart, are written, since no copy of them is found.
func TestACopyKilledBeforeTheExporterTookAPushWritesItsCases(t *testing.T) {
	life, want := copyOfFiveCases(t)

	require.True(t, life.diesAt(2, diesBeforeTake))
	require.NotEmpty(t, copiedRowsByID(t, life.dst), "the first push was written")

	life.restartsAndFinishes()
	assert.Equal(t, want, copiedRowsByID(t, life.dst), "every case of src once in the copy")
}

// A copy of a case re-driven and quarantined again holds two quarantine rows of it, from the
// same spans, with the same verdict: the exporter would take the copy of the older row for a
// copy of the newer one. A push of the newer row the exporter never took, marked resent after
// the restart, is written all the same: the copy's current row of the case is the newer one,
// as in the original.
func TestACopyKilledBeforeTheExporterTookTheNewerRowOfACaseWritesIt(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "dst")
	capture(t, src, testfixtures.OTelNoContent, 1, 1, strict)
	exp := testdataset.Writer(t, src, "zstd")
	p := newCaseProcessor(t, exp, func(c *replaycaseprocessor.Config) {
		every := c.Evidence.Require
		relaxed(c) // the provenance in the metadata
		c.Evidence.Require = every
	})
	runBacklog(t, src, p.traces, p.logs) // the strict policy again: quarantined again
	p.shutdown(t)
	require.NoError(t, exp.Shutdown(context.Background()))
	rows := rowsOf(t, src, dataset.Quarantine)
	sort.Slice(rows, func(i, j int) bool { return filepath.Base(rows[i].file) < filepath.Base(rows[j].file) })
	require.Len(t, rows, 2, "the case's first row and the row its re-drive quarantined again")
	require.Equal(t, rows[0].c.CaseID, rows[1].c.CaseID)
	require.Equal(t, rows[0].c.Provenance.SpanCount, rows[1].c.Provenance.SpanCount)
	require.NotEmpty(t, rows[1].c.Metadata[MetaRedrivenFrom], "the newer row was re-driven from the first")
	life := copyLife{t: t, src: src, dst: dst, storageDir: t.TempDir(), edit: func(c *Config) { c.BatchSize = 1 }}

	require.True(t, life.diesAt(2, diesBeforeTake)) // the older row written, the newer one never taken

	life.restartsAndFinishes()
	got := rowsOf(t, dst, dataset.Quarantine)
	require.Equal(t, 2, len(got), "both rows copied, each once")
	rel, err := filepath.Rel(src, rows[1].file)
	require.NoError(t, err)
	assert.Equal(t, filepath.ToSlash(rel)+"#0", currentRows(t, dst)[rows[0].c.CaseID].Metadata[MetaRedrivenFrom], "the copy's current row is a copy of the newer row")
}
