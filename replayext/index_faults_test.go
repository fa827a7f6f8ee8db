package replayext

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/replayext/internal/metadata"
	"github.com/reprise-dev/reprise/replayext/internal/metadatatest"
)

// Rows whose case id no request can name are counted by reason in the telemetry and logged
// once per file with the first such row; the other rows are indexed.
func TestRowsWithMalformedCaseIDsAreCountedAndLogged(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 100})
	require.NoError(t, err)
	var cases []*replaycase.Case
	for i := range 6 {
		c := syntheticCase(i, 100)
		switch i {
		case 1, 4:
			c.CaseID = "short"
		case 2:
			c.CaseID = fmt.Sprintf("%031xz", i) // 32 characters, not hex
		}
		cases = append(cases, c)
	}
	_, err = w.Write(cases)
	require.NoError(t, err)

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := metadatatest.NewSettings(tel)
	core, logs := observer.New(zapcore.WarnLevel)
	set.Logger = zap.New(core)
	s := startReplayWith(t, root, nil, set, componenttest.NewNopHost())

	byReason := func(reason string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(attribute.String("reason", reason))}
	}
	metadatatest.AssertEqualExtensionReplayIndexRowsSkipped(t, tel, []metricdata.DataPoint[int64]{byReason(skipCaseIDLength, 2), byReason(skipCaseIDNotHex, 1)},
		metricdatatest.IgnoreTimestamp()) // data points compared in any order
	got := map[string]int64{}
	for _, e := range logs.FilterMessageSnippet("rows left out of the replay index").All() {
		f := e.ContextMap()
		assert.Contains(t, f["file"], filepath.Join(root, dataset.Cases))
		got[f["reason"].(string)] = f["rows"].(int64)
		if f["reason"] == skipCaseIDLength {
			assert.Equal(t, int64(1), f["first_row"])
		}
	}
	assert.Equal(t, map[string]int64{skipCaseIDLength: 2, skipCaseIDNotHex: 1}, got, "one log line per file and reason")
	for _, i := range []int{0, 3, 5} { // rows after the ones left out are read at their own row
		c, err := s.ext.store.get(t.Context(), cases[i].CaseID)
		require.NoError(t, err)
		assert.Equal(t, cases[i].CaseID, c.CaseID)
		assert.Equal(t, cases[i].Steps[0].CallSiteID, c.Steps[0].CallSiteID)
	}
	resp, body := s.do("GET", "/v1/cases?limit=10", nil, nil)
	require.Equal(t, 200, resp.StatusCode)
	for _, i := range []int{0, 3, 5} {
		assert.Contains(t, string(body), cases[i].CaseID)
	}
}

// failAllocations makes the index's allocations fail from the n-th on (counted from 0) until
// the test ends.
func failAllocations(t *testing.T, n int) {
	seen := 0
	allocFault = func(int) error {
		seen++
		if seen > n {
			return errors.New("cannot allocate memory")
		}
		return nil
	}
	t.Cleanup(func() { allocFault = nil })
}

// indexedStore is a store over a dataset of n generated cases, indexed.
func indexedStore(t *testing.T, n int) (root string, s *store) {
	root = filepath.Join(t.TempDir(), "data")
	generateDataset(t, root, 0, n, 100)
	s = newStore(root, 4)
	added, _, failed := s.refresh(t.Context()).counts()
	require.Empty(t, failed)
	require.Equal(t, n, added)
	return root, s
}

// When the system refuses memory for the index, the extension does not start, and says why.
func TestStartRefusesWhenTheIndexCannotBeAllocated(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	generateDataset(t, root, 0, 10, 100)
	failAllocations(t, 0)
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = root
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	err = ext.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorIs(t, err, errIndexMemory)
	assert.ErrorContains(t, err, "indexing "+root+": replay index: the system refused memory for the index")
	assert.ErrorContains(t, err, "cannot allocate memory")
	require.NoError(t, ext.Shutdown(context.Background()))
}

// A refresh that cannot allocate leaves the index as it was, whichever of the three sorted
// slices fails part way through publishing (the records have room for these cases: the first
// allocation at start-up, which fails in the test above, is theirs), and the next refresh
// indexes the files it could not.
func TestRefreshWithoutMemoryLeavesTheIndexAsItWas(t *testing.T) {
	for failAt := range 3 {
		t.Run(fmt.Sprint("allocation ", failAt), func(t *testing.T) {
			root, s := indexedStore(t, 10)
			before := listAll(s)

			generateDataset(t, root, 10, 20, 100)
			failAllocations(t, failAt)
			res := s.refresh(t.Context())
			require.ErrorIs(t, res.err, errIndexMemory)
			assert.Equal(t, before, listAll(s), "nothing of the refresh is visible")
			for i := range 10 {
				assert.True(t, s.has(fmt.Sprintf("%032x", i)))
				c, err := s.get(t.Context(), fmt.Sprintf("%032x", i))
				require.NoError(t, err)
				_, hits := s.match(requestOf(c), "", nil)
				assert.Len(t, hits, 1, "case %d's call", i)
			}
			assert.False(t, s.has(fmt.Sprintf("%032x", 15)))
			_, hits := s.match(requestOf(syntheticCase(15, 100)), "", nil)
			assert.Empty(t, hits)

			allocFault = nil
			added, _, failed := s.refresh(t.Context()).counts()
			require.Empty(t, failed)
			assert.Equal(t, 10, added, "the files are indexed on the next refresh")
			assert.Len(t, listAll(s), 20)
			c, err := s.get(t.Context(), fmt.Sprintf("%032x", 15))
			require.NoError(t, err)
			_, hits = s.match(requestOf(c), "", nil)
			assert.Len(t, hits, 1)
		})
	}
}

// Rows left out of files whose cases a refresh could not publish are not reported by it: the
// files are read again on the next refresh, which reports them once.
func TestRowsLeftOutAreReportedOnceTheirFileIsIndexed(t *testing.T) {
	root, s := indexedStore(t, 10)
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 100})
	require.NoError(t, err)
	bad := syntheticCase(11, 100)
	bad.CaseID = "short"
	_, err = w.Write([]*replaycase.Case{syntheticCase(10, 100), bad})
	require.NoError(t, err)
	failAllocations(t, 0)
	res := s.refresh(t.Context())
	require.ErrorIs(t, res.err, errIndexMemory)
	assert.Empty(t, res.skipped, "the file is not indexed yet")

	allocFault = nil
	res = s.refresh(t.Context())
	require.NoError(t, res.err)
	assert.Equal(t, 1, res.added)
	require.Len(t, res.skipped, 1)
	assert.Equal(t, skipCaseIDLength, res.skipped[0].reason)
	assert.Equal(t, int64(1), res.skipped[0].firstRow)
	assert.Equal(t, 1, res.skipped[0].count)
	assert.Empty(t, s.refresh(t.Context()).skipped, "counted once")
}

// A refresh whose records cannot grow adds nothing of the file, and the next refresh indexes
// it. The records' first chunks are filled with entries nothing addresses, so that the
// refresh needs new ones.
func TestRefreshWithoutMemoryForRecordsRetriesTheFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	generateDataset(t, root, 0, 10, 100)
	s := newStore(root, 4)
	require.NoError(t, s.entries.reserve(recordsPerChunk))
	require.NoError(t, s.summaryOf.reserve(recordsPerChunk))
	for range recordsPerChunk {
		s.entries.add(caseEntry{pos: noPos})
		s.summaryOf.add(0)
	}

	failAllocations(t, 0)
	res := s.refresh(t.Context())
	require.ErrorIs(t, res.err, errIndexMemory)
	assert.Zero(t, res.added)
	assert.False(t, s.has(fmt.Sprintf("%032x", 5)))

	allocFault = nil
	added, _, failed := s.refresh(t.Context()).counts()
	require.Empty(t, failed)
	assert.Equal(t, 10, added, "the file is indexed on the next refresh")
	for i := range 10 {
		c, err := s.get(t.Context(), fmt.Sprintf("%032x", i))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("%032x", i), c.CaseID)
		_, hits := s.match(requestOf(c), "", nil)
		assert.Equal(t, []hit{{c.CaseID, 0}}, hits)
	}
	assert.Len(t, listAll(s), 10)
}
