package replayparquetreceiver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/replaycase"
)

// flakyStorage is a storage extension whose client keeps values in memory and fails the
// first failSets calls of Set (a full disk, a busy database).
type flakyStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu       sync.Mutex
	values   map[string][]byte
	failSets int
}

func (s *flakyStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return s, nil
}

func (s *flakyStorage) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.values[key], nil
}

func (s *flakyStorage) Set(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failSets > 0 {
		s.failSets--
		return errors.New("no space left on device (test)")
	}
	s.values[key] = value
	return nil
}

func (s *flakyStorage) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.values, key)
	return nil
}

// Batch applies the operations; a failing Set fails it whole, as a storage transaction does.
func (s *flakyStorage) Batch(ctx context.Context, ops ...*storage.Operation) error {
	s.mu.Lock()
	if s.failSets > 0 {
		s.failSets--
		s.mu.Unlock()
		return errors.New("no space left on device (test)")
	}
	s.mu.Unlock()
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value, _ = s.Get(ctx, op.Key)
		case storage.Set:
			s.mu.Lock()
			s.values[op.Key] = op.Value
			s.mu.Unlock()
		case storage.Delete:
			_ = s.Delete(ctx, op.Key)
		}
	}
	return nil
}

func (s *flakyStorage) Close(context.Context) error { return nil }

type flakyHost struct {
	component.Host
	ext *flakyStorage
}

func (h flakyHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{storageID: h.ext}
}

// A checkpoint that cannot be saved after a push the next consumer took is saved again; the
// file is not read again from the old checkpoint, which would push those cases a second time.
func TestCheckpointSaveFailureDoesNotEmitTwice(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 4, strict)

	st := &flakyStorage{values: map[string][]byte{}, failSets: 1}
	rec := &traceRecorder{accept: -1}
	next, err := consumer.NewTraces(rec.consume)
	require.NoError(t, err)
	rcv, r := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), root, func(c *Config) {
		c.BatchSize = 2
	}, next, nil)
	require.NoError(t, rcv.Start(context.Background(), flakyHost{componenttest.NewNopHost(), st}))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))

	distinct := map[string]bool{}
	for _, id := range rec.accepted {
		distinct[id] = true
	}
	assert.Len(t, distinct, 4, "every case emitted")
	assert.Len(t, rec.accepted, 4, "no case emitted twice")
}

// A checkpoint counts the rows handled under one row selection: a second re-drive from the same
// storage and component id with other reason codes, statuses or case ids reads the files again
// and emits what it selects (it emitted nothing, and reported its backlog done). A file-level
// change (from, to, datasets) keeps the checkpoints: the files read before are not read again.
func TestAnotherRowSelectionReadsTheFilesAgain(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 3, strict)
	rows := rowsOf(t, root, dataset.Quarantine)
	require.Len(t, rows, 3)
	storageDir := t.TempDir()
	run := func(edit func(*Config)) []string {
		host, ext := teststorage.Start(t, storageDir)
		rec := &traceRecorder{accept: -1}
		next, err := consumer.NewTraces(rec.consume)
		require.NoError(t, err)
		set := receivertest.NewNopSettings(NewFactory().Type())
		set.ID = component.MustNewID("replay_parquet") // the same component, the same storage
		rcv, r := newTestReceiver(t, set, root, edit, next, nil)
		require.NoError(t, rcv.Start(context.Background(), host))
		waitBacklog(t, r)
		require.NoError(t, rcv.Shutdown(context.Background()))
		require.NoError(t, ext.Shutdown(context.Background()))
		return rec.accepted
	}
	traceOf := func(c replaycase.Case) string { return c.Provenance.TraceID }

	first := run(func(c *Config) { c.Select.CaseIDs = []string{rows[0].c.CaseID} })
	assert.Equal(t, []string{traceOf(rows[0].c)}, first)
	second := run(func(c *Config) { c.Select.CaseIDs = []string{rows[1].c.CaseID, rows[2].c.CaseID} })
	assert.ElementsMatch(t, []string{traceOf(rows[1].c), traceOf(rows[2].c)}, second, "the new selection's cases are emitted")
	again := run(func(c *Config) { c.Select.CaseIDs = []string{rows[2].c.CaseID, rows[1].c.CaseID} })
	assert.Empty(t, again, "the same selection, listed in another order, continues after its checkpoints")
	widened := run(func(c *Config) {
		c.Select.CaseIDs = []string{rows[1].c.CaseID, rows[2].c.CaseID}
		c.Select.From = "2000-01-01"
	})
	assert.Empty(t, widened, "bounds of dt choose files, not rows: the checkpoints hold")
}

// A checkpoint value records its selection; one written before selections were recorded (a
// bare row count) still counts, for whatever the selection is now.
func TestCheckpointValues(t *testing.T) {
	ctx := context.Background()
	st := &flakyStorage{values: map[string][]byte{checkpointKey("quarantine/dt=2026-11-30/old.parquet"): []byte("7")}}
	a, b := &checkpoints{client: st, selection: "aaaa"}, &checkpoints{client: st, selection: "bbbb"}
	n, _, err := b.rowsDone(ctx, "quarantine/dt=2026-11-30/old.parquet")
	require.NoError(t, err)
	assert.Equal(t, int64(7), n, "a bare row count")

	require.NoError(t, a.setRowsDone(ctx, "quarantine/dt=2026-11-30/new.parquet", 16))
	assert.Equal(t, "16 aaaa", string(st.values[checkpointKey("quarantine/dt=2026-11-30/new.parquet")]))
	n, _, err = a.rowsDone(ctx, "quarantine/dt=2026-11-30/new.parquet")
	require.NoError(t, err)
	assert.Equal(t, int64(16), n)
	n, _, err = b.rowsDone(ctx, "quarantine/dt=2026-11-30/new.parquet")
	require.NoError(t, err)
	assert.Zero(t, n, "counted under another selection")

	st.values[checkpointKey("x")] = []byte("sixteen aaaa")
	_, _, err = a.rowsDone(ctx, "x")
	assert.ErrorContains(t, err, `checkpoint of x is "sixteen aaaa", not a row count`)
}

// A file set aside is not read again under any selection by a build that reads the same schema
// version; a build that reads another version reads it again (it may read the file now).
func TestSetAsideCheckpoint(t *testing.T) {
	ctx := context.Background()
	st := &flakyStorage{values: map[string][]byte{}}
	a, b := &checkpoints{client: st, selection: "aaaa"}, &checkpoints{client: st, selection: "bbbb"}
	require.NoError(t, a.setAside(ctx, "bad.parquet"))
	for _, c := range []*checkpoints{a, b} {
		n, setAside, err := c.rowsDone(ctx, "bad.parquet")
		require.NoError(t, err)
		assert.True(t, setAside)
		assert.Zero(t, n)
	}
	st.values[checkpointKey("old.parquet")] = []byte(setAsideMark + " replay-case.v0")
	n, setAside, err := a.rowsDone(ctx, "old.parquet")
	require.NoError(t, err)
	assert.False(t, setAside, "set aside by a build that reads another version")
	assert.Zero(t, n)
}

// A file set aside after some of its rows were handled (a corrupt page after them) keeps their
// count: a build that reads another version reads it again after them, under the selection
// that handled them, and so emits none of them twice.
func TestSetAsideKeepsTheRowsDone(t *testing.T) {
	ctx := context.Background()
	st := &flakyStorage{values: map[string][]byte{}}
	a, b := &checkpoints{client: st, selection: "aaaa"}, &checkpoints{client: st, selection: "bbbb"}
	require.NoError(t, a.setRowsDone(ctx, "part.parquet", 3))
	require.NoError(t, a.setAside(ctx, "part.parquet"))
	n, setAside, err := a.rowsDone(ctx, "part.parquet")
	require.NoError(t, err)
	assert.True(t, setAside)
	assert.Zero(t, n)

	// The same value, as a build that reads another schema version finds it.
	key := checkpointKey("part.parquet")
	st.values[key] = []byte(strings.Replace(string(st.values[key]), dataset.SchemaVersion, "replay-case.v0", 1))
	n, setAside, err = a.rowsDone(ctx, "part.parquet")
	require.NoError(t, err)
	assert.False(t, setAside)
	assert.Equal(t, int64(3), n, "the rows handled before it was set aside")
	n, _, err = b.rowsDone(ctx, "part.parquet")
	require.NoError(t, err)
	assert.Zero(t, n, "handled under another selection")
}

// A push in flight counts for the checkpoint it was recorded at and the selection it was
// recorded under; the checkpoint after the push records the next one, in the same batch.
func TestInFlightValues(t *testing.T) {
	ctx := context.Background()
	st := &flakyStorage{values: map[string][]byte{}}
	a, b := &checkpoints{client: st, selection: "aaaa"}, &checkpoints{client: st, selection: "bbbb"}
	const rel = "cases/dt=2026-11-30/part.parquet"
	require.NoError(t, a.setInFlight(ctx, rel, 16, 8))
	assert.Equal(t, "16 8 aaaa", string(st.values[inFlightKey(rel)]))
	for _, c := range []struct {
		cp   *checkpoints
		done int64
		want int
		why  string
	}{
		{a, 16, 8, "the push after the checkpoint: its batch_size rows"},
		{a, 32, 0, "a checkpoint past it"},
		{a, 0, 0, "a checkpoint before it (another push's)"},
		{b, 16, 0, "recorded under another selection"},
	} {
		rows, err := c.cp.inFlight(ctx, rel, c.done)
		require.NoError(t, err)
		assert.Equal(t, c.want, rows, c.why)
	}

	require.NoError(t, a.setRowsDoneAfterPush(ctx, rel, 24, 8))
	assert.Equal(t, "24 aaaa", string(st.values[checkpointKey(rel)]))
	assert.Equal(t, "24 8 aaaa", string(st.values[inFlightKey(rel)]), "the next push, recorded with the checkpoint")

	st.values[inFlightKey(rel)] = []byte("16 aaaa")
	_, err := a.inFlight(ctx, rel, 16)
	assert.ErrorContains(t, err, `push in flight of `+rel+` is "16 aaaa"`)
}
