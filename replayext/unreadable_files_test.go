package replayext

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/replayext/internal/metadatatest"
)

// twoFiles writes cases 0-2 and 3-5 into two data files under root and returns their paths.
func twoFiles(t *testing.T, root string) (good, bad string) {
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 100})
	require.NoError(t, err)
	var paths []string
	for _, from := range []int{0, 3} {
		var cases []*replaycase.Case
		for i := from; i < from+3; i++ {
			cases = append(cases, syntheticCase(i, 100))
		}
		res, err := w.Write(cases)
		require.NoError(t, err)
		for _, f := range res.Files {
			if f.Dataset == dataset.Cases {
				paths = append(paths, f.Path)
			}
		}
	}
	require.Len(t, paths, 2)
	return paths[0], paths[1]
}

// observed are extension settings whose telemetry and logs (from Info on) a test reads.
func observed(t *testing.T) (extension.Settings, *componenttest.Telemetry, *observer.ObservedLogs) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := metadatatest.NewSettings(tel)
	core, logs := observer.New(zapcore.InfoLevel)
	set.Logger = zap.New(core)
	return set, tel, logs
}

// A data file whose bytes this build cannot read (not Parquet, or a corrupt page of a column
// the index reads) is set aside: logged once at Error with its path and the reason, counted,
// and not read again by this process; the other file's cases are served.
func TestAnUnreadableFileIsSetAsideOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, path string)
	}{
		{"not Parquet", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("not a parquet file"), 0o644))
		}},
		{"a corrupt page", func(t *testing.T, path string) {
			testdataset.CorruptPage(t, path, 0, testdataset.PageBodyBadCRC, "case_id")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "data")
			_, bad := twoFiles(t, root)
			tc.spoil(t, bad)

			set, tel, logs := observed(t)
			s := startReplayWith(t, root, func(c *Config) { c.RefreshInterval = time.Hour }, set, componenttest.NewNopHost())
			require.NoError(t, s.ext.refresh(t.Context()), "a second refresh")

			for i := range 3 {
				resp, _ := s.do("GET", "/v1/cases/"+syntheticCase(i, 100).CaseID, nil, nil)
				assert.Equal(t, 200, resp.StatusCode, "case %d of the good file", i)
			}
			setAside := logs.FilterMessageSnippet("set aside").All()
			require.Len(t, setAside, 1, "logged once over two refreshes")
			assert.Equal(t, zapcore.ErrorLevel, setAside[0].Level)
			assert.Equal(t, bad, setAside[0].ContextMap()["file"])
			assert.Contains(t, setAside[0].ContextMap()["error"], dataset.ErrUnreadable.Error())
			assert.Empty(t, logs.FilterLevelExact(zapcore.WarnLevel).All(), "not taken for a failure that may pass")
			metadatatest.AssertEqualExtensionReplayFilesSkipped(t, tel, []metricdata.DataPoint[int64]{
				{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", skipUnreadable))},
			}, metricdatatest.IgnoreTimestamp())
		})
	}
}

// flakySource fails the index scans of the files in failing, as a disk or a network can.
type flakySource struct {
	source
	mu      sync.Mutex
	failing map[string]error
}

func (f *flakySource) scanIndex(ctx context.Context, file string, fn func(row int64, r *dataset.ReplayIndexRow) error) error {
	f.mu.Lock()
	err := f.failing[file]
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.source.scanIndex(ctx, file, fn)
}

// A file whose read fails in a way that may pass is read again at every refresh: logged at
// Warn at its first failure only, at Info once it is read, and its cases are served from then.
func TestAFileThatFailsToReadIsRetriedAndLoggedOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	_, flaky := twoFiles(t, root)
	set, _, logs := observed(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = root
	r, err := newReplay(set, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	src := &flakySource{source: r.store.src, failing: map[string]error{flaky: errors.New("input/output error")}}
	r.store = newStoreOf(src, cfg.CaseCacheSize)
	flakyCase := syntheticCase(4, 100).CaseID

	for range 3 {
		require.NoError(t, r.refresh(t.Context()))
	}
	assert.False(t, r.store.has(flakyCase))
	assert.True(t, r.store.has(syntheticCase(1, 100).CaseID))
	warned := logs.FilterField(zap.String("file", flaky)).All()
	require.Len(t, warned, 1, "one line over three refreshes")
	assert.Equal(t, zapcore.WarnLevel, warned[0].Level)
	assert.Equal(t, "input/output error", warned[0].ContextMap()["error"])

	src.mu.Lock()
	delete(src.failing, flaky)
	src.mu.Unlock()
	require.NoError(t, r.refresh(t.Context()))
	c, err := r.store.get(t.Context(), flakyCase)
	require.NoError(t, err, "served once its read succeeds")
	assert.Equal(t, flakyCase, c.CaseID)
	read := logs.FilterField(zap.String("file", flaky)).All()
	require.Len(t, read, 2)
	assert.Equal(t, zapcore.InfoLevel, read[1].Level)
	require.NoError(t, r.refresh(t.Context()))
	assert.Len(t, logs.FilterField(zap.String("file", flaky)).All(), 2, "nothing more once it is read")
	assert.Empty(t, logs.FilterMessageSnippet("set aside").All())
}
