package replayext

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// syntheticCase is case i of a generated dataset: one model call whose prompt holds
// contentBytes of text, with a call-site id of its own.
func syntheticCase(i, contentBytes int) *replaycase.Case {
	prompt := fmt.Sprintf("case %d: ", i) + strings.Repeat("lorem ipsum ", contentBytes/12)
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	c := &replaycase.Case{
		CaseID: fmt.Sprintf("%032x", i), SchemaVersion: replaycase.SchemaVersion, Status: replaycase.StatusAccepted,
		StartTime: start, EndTime: start.Add(time.Second), AgentName: "synthetic-agent",
		Steps: []replaycase.Step{{
			Index: 0, Kind: replaycase.StepLLM, StartTime: start,
			ModelConfig:    replaycase.ModelConfig{RequestModel: "gpt-4o-mini"},
			InputMessages:  []replaycase.Message{{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: prompt}}}},
			OutputMessages: []replaycase.Message{{Role: "assistant", FinishReason: "stop", Parts: []replaycase.Part{{Type: "text", Content: "answer " + strconv.Itoa(i)}}}},
		}},
	}
	c.Steps[0].CallSiteID = callsite.FromStep(&c.Steps[0]).ID(nil)
	return c
}

// generateDataset writes cases [from, to) into root in batches, as the exporter would.
func generateDataset(tb testing.TB, root string, from, to, contentBytes int) {
	tb.Helper()
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 50_000, RowGroupRows: 1000})
	require.NoError(tb, err)
	const batch = 10_000
	for lo := from; lo < to; lo += batch {
		var cases []*replaycase.Case
		for i := lo; i < min(lo+batch, to); i++ {
			cases = append(cases, syntheticCase(i, contentBytes))
		}
		_, err := w.Write(cases)
		require.NoError(tb, err)
	}
}

// counts are the cases a refresh added and dropped and the files that failed: what most
// tests check of it.
func (r refreshed) counts() (added, dropped int, failed map[string]error) {
	return r.added, r.dropped, r.failed
}

// heapInUse is the live heap. Two collections: the first moves sync.Pool contents (the Parquet
// writer's buffers) to the victim cache, the second frees them.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The index holds no case content: memory per case stays far below what a case holds, and
// content is read back from the files on demand. New files are picked up incrementally.
func TestStoreMemoryIsBoundedByTheIndex(t *testing.T) {
	const n, content = 5_000, 8 << 10
	root := filepath.Join(t.TempDir(), "data")
	generateDataset(t, root, 0, n, content)

	before := heapInUse()
	s := newStore(root, 16)
	added, _, failed := s.refresh(t.Context()).counts()
	require.Empty(t, failed)
	require.Equal(t, n, added)
	heap := float64(heapInUse()) - float64(before)
	mapped := float64(mappedBytes(s))
	perCase := (heap + mapped) / n
	t.Logf("index: %.0f bytes per case, %.0f of them outside the Go heap (each case holds %d bytes of prompt)", perCase, mapped/n, content)
	assert.Less(t, perCase, 1024.0, "the index must not hold case content")
	assert.Less(t, heap/n, 64.0, "the records and lookup slices are outside the Go heap")
	assert.InDelta(t, 64, mapped/n, 1, "a case with one model call: a 32-byte entry, its 2-byte summary, an 18-byte call and three 4-byte numbers")

	for _, i := range []int{0, 2_345, n - 1} {
		c := syntheticCase(i, content)
		key, hits := s.match(requestOf(c), "", nil)
		require.Len(t, hits, 1, "case %d", i)
		assert.Equal(t, c.Steps[0].CallSiteID, key)
		st, err := s.llmStep(t.Context(), hits[0])
		require.NoError(t, err)
		assert.Equal(t, "answer "+strconv.Itoa(i), st.OutputMessages[0].Parts[0].Content, "content read from the file")
	}
	for i := range 100 {
		_, err := s.get(t.Context(), fmt.Sprintf("%032x", i))
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, s.cache.Len(), 16, "the content cache stays at its size")

	generateDataset(t, root, n, n+500, content)
	added, _, failed = s.refresh(t.Context()).counts()
	require.Empty(t, failed)
	assert.Equal(t, 500, added, "only the new files are read")
	assert.True(t, s.has(fmt.Sprintf("%032x", n+499)))
	added, _, _ = s.refresh(t.Context()).counts()
	assert.Zero(t, added)
}

// requestOf is the live request that matches a synthetic case's call.
func requestOf(c *replaycase.Case) callsite.Request { return callsite.FromStep(&c.Steps[0]) }

func TestStoreIgnoresDuplicatesAndUnknownCases(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	generateDataset(t, root, 0, 10, 100)
	generateDataset(t, root, 5, 15, 100) // at-least-once delivery: 5..9 written twice
	s := newStore(root, 4)
	added, _, _ := s.refresh(t.Context()).counts()
	assert.Equal(t, 15, added)
	for _, i := range []int{4, 7, 10} {
		_, hits := s.match(requestOf(syntheticCase(i, 100)), "", nil)
		assert.Equal(t, []hit{{fmt.Sprintf("%032x", i), 0}}, hits, "case %d's call, once", i)
	}
	_, err := s.get(t.Context(), "nope")
	assert.ErrorIs(t, err, errNoCase)
	assert.Equal(t, fmt.Sprintf("%032x", 0), s.firstCase())
	assert.Zero(t, s.llmCount("nope"))
	all := s.callsFor("not-a-call-site-id", nil, 10).all
	assert.Zero(t, all)
}

// A request recorded by several cases is found in all of them, or in one case only when the
// replay names it, at each LLM step of that case that recorded it.
func TestMatchWithinOneCase(t *testing.T) {
	x, y := syntheticCase(100, 100).Steps[0], syntheticCase(101, 100).Steps[0]
	withSteps := func(i int, steps ...replaycase.Step) *replaycase.Case {
		c := syntheticCase(i, 100)
		c.Steps = nil
		for j, st := range steps {
			st.Index = j
			c.Steps = append(c.Steps, st)
		}
		return c
	}
	a, b, c := withSteps(0, x, y, x), withSteps(1, x), withSteps(2, y, x)
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 100})
	require.NoError(t, err)
	_, err = w.Write([]*replaycase.Case{a, b, c})
	require.NoError(t, err)
	s := newStore(root, 4)
	added, _, failed := s.refresh(t.Context()).counts()
	require.Empty(t, failed)
	require.Equal(t, 3, added)

	req := callsite.FromStep(&x)
	id, hits := s.match(req, "", nil)
	assert.Equal(t, x.CallSiteID, id)
	assert.Equal(t, []hit{{a.CaseID, 0}}, hits, "without a case, the first: which answer is the session's (followed)")
	calls := s.callsFor(id, nil, 10)
	every, all := calls.hits, calls.all
	assert.ElementsMatch(t, []hit{{a.CaseID, 0}, {a.CaseID, 2}, {b.CaseID, 0}, {c.CaseID, 1}}, every)
	assert.Equal(t, 4, all)
	first := s.callsFor(id, nil, 1)
	assert.True(t, first.more)
	page := s.callsFor(id, &first.last, 2)
	assert.Equal(t, every[1:3], page.hits, "a page of them")
	assert.True(t, page.more)
	page = s.callsFor(id, &calls.last, 2)
	assert.Empty(t, page.hits, "past the last")
	assert.False(t, page.more)
	hits, all = s.followed(id, c.CaseID, 0)
	assert.Equal(t, []hit{{c.CaseID, 1}}, hits)
	assert.Equal(t, 4, all)
	_, hits = s.match(req, a.CaseID, nil)
	assert.Equal(t, []hit{{a.CaseID, 0}, {a.CaseID, 2}}, hits)
	_, hits = s.match(req, strings.ToUpper(c.CaseID), nil)
	assert.Equal(t, []hit{{c.CaseID, 1}}, hits, "the case id in either case, the hit's in lowercase")
	_, hits = s.match(callsite.FromStep(&y), b.CaseID, nil)
	assert.Empty(t, hits, "b did not record y")
	_, hits = s.match(req, fmt.Sprintf("%032x", 99), nil)
	assert.Empty(t, hits, "a case the index does not hold")
	_, hits = s.match(req, "not-a-case-id", nil)
	assert.Empty(t, hits)
}

// A file whose bytes are not a data file this build reads (here a truncated footer) is set
// aside: the next refreshes do not read it again, even whole again. A restart (a new store)
// reads it.
func TestStoreSetsAsideUnreadableFiles(t *testing.T) {
	root, file := oneFileOfThreeCases(t)
	good, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, good[:len(good)/2], 0o644))
	s := newStore(root, 4)
	setAsideAtRefresh(t, s, file)
	require.NoError(t, os.WriteFile(file, good, 0o644))
	res := s.refresh(t.Context())
	assert.Zero(t, res.added)
	assert.Empty(t, res.unreadable, "reported once")
	added, _, failed := newStore(root, 4).refresh(t.Context()).counts()
	assert.Empty(t, failed)
	assert.Equal(t, 3, added)
}

// A file whose footer places a column chunk's offset index at a negative length is set aside
// at the refresh (found by dataset's FuzzACorruptFileIsReadOrRefused): the index's scan, which
// does not read the offset indexes, indexed its cases, and a request for one made parquet-go
// panic (makeslice: len out of range) where the read of the case loaded the index.
func TestStoreSetsAsideAFileWithAForgedOffsetIndex(t *testing.T) {
	root, file := oneFileOfThreeCases(t)
	testdataset.EditFooter(t, file, func(m *format.FileMetaData) { m.RowGroups[0].Columns[0].OffsetIndexLength = -1 })
	assert.ErrorContains(t, setAsideAtRefresh(t, newStore(root, 4), file), "offset index")
}

// oneFileOfThreeCases writes a dataset of one cases/ file of three cases.
func oneFileOfThreeCases(t *testing.T) (root, file string) {
	root = filepath.Join(t.TempDir(), "data")
	generateDataset(t, root, 0, 3, 100)
	files, err := filepath.Glob(filepath.Join(root, "cases", "*", "*.parquet"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	return root, files[0]
}

// setAsideAtRefresh refreshes s and checks that it set file aside, indexing nothing; it
// returns the error file was set aside with.
func setAsideAtRefresh(t *testing.T, s *store, file string) error {
	t.Helper()
	res := s.refresh(t.Context())
	assert.Zero(t, res.added)
	assert.Empty(t, res.failed, "not a failure that may pass")
	require.Contains(t, res.unreadable, file)
	assert.ErrorIs(t, res.unreadable[file], dataset.ErrUnreadable)
	return res.unreadable[file]
}

// TestGenerateScaleDataset writes a large synthetic dataset for the start-up and memory
// measurement in docs/benchmarks.md; it runs only when asked:
//
//	REPRISE_SCALE_DIR=/tmp/scale REPRISE_SCALE_CASES=1000000 go test -run TestGenerateScaleDataset -timeout 60m ./replayext/
func TestGenerateScaleDataset(t *testing.T) {
	dir, cases := os.Getenv("REPRISE_SCALE_DIR"), os.Getenv("REPRISE_SCALE_CASES")
	if dir == "" || cases == "" {
		t.Skip("set REPRISE_SCALE_DIR and REPRISE_SCALE_CASES to generate the scale dataset")
	}
	n, err := strconv.Atoi(cases)
	require.NoError(t, err)
	start := time.Now()
	generateDataset(t, dir, 0, n, 2<<10)
	t.Logf("%d cases written to %s in %s", n, dir, time.Since(start).Round(time.Second))
}

// TestScaleIndex loads a dataset written by TestGenerateScaleDataset and reports the index's
// memory (outside the heap and on it) and load time; it runs only when asked (REPRISE_SCALE_DIR).
func TestScaleIndex(t *testing.T) {
	dir := os.Getenv("REPRISE_SCALE_DIR")
	if dir == "" {
		t.Skip("set REPRISE_SCALE_DIR to a dataset written by TestGenerateScaleDataset")
	}
	before := heapInUse()
	start := time.Now()
	s := newStore(dir, 256)
	added, _, failed := s.refresh(t.Context()).counts()
	took := time.Since(start)
	require.Empty(t, failed)
	live, mapped := float64(heapInUse())-float64(before), float64(mappedBytes(s))
	t.Logf("%d cases indexed in %s; index %.0f MiB outside the Go heap and %.1f MiB of live heap (%.0f bytes per case)",
		added, took.Round(time.Millisecond), mapped/(1<<20), live/(1<<20), (live+mapped)/float64(added))
	if p := os.Getenv("REPRISE_SCALE_HEAPPROFILE"); p != "" {
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, pprof.WriteHeapProfile(f))
		require.NoError(t, f.Close())
	}
	runtime.KeepAlive(s)
}

// A listing page reads its cases' summaries (one pass per file, over the summary columns), in
// the order asked, whatever the files, the cached ones from the cache; a case the index does
// not hold (any more) is left out.
func TestSummariesInTheOrderAsked(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	generateDataset(t, root, 0, 30, 100)
	generateDataset(t, root, 30, 40, 100)
	s := newStore(root, 4)
	added, _, _ := s.refresh(t.Context()).counts()
	require.Equal(t, 40, added)
	var ids []string
	order := []int{35, 3, 4, 5, 29, 0, 31, 4}
	for _, i := range order {
		ids = append(ids, fmt.Sprintf("%032x", i))
	}
	_, err := s.get(t.Context(), ids[1]) // one of them cached
	require.NoError(t, err)
	cases, err := s.summariesOf(t.Context(), ids)
	require.NoError(t, err)
	require.Len(t, cases, len(ids))
	for i, c := range cases {
		full, err := s.get(t.Context(), ids[i]) // the whole row, read by the row reader
		require.NoError(t, err)
		assert.Equal(t, *dataset.SummaryOf(full), *c)
		assert.Equal(t, syntheticCase(order[i], 100).StartTime, c.StartTime)
	}
	cases, err = s.summariesOf(t.Context(), []string{"nope", ids[0], fmt.Sprintf("%032x", 99)})
	require.NoError(t, err)
	require.Len(t, cases, 1, "ids the index does not hold are left out")
	assert.Equal(t, ids[0], cases[0].CaseID)
}

// mappedBytes is what the index holds outside the Go heap: its records and lookup slices.
func mappedBytes(s *store) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.entries.len()*int(unsafe.Sizeof(caseEntry{})+2) + s.llms.len()*int(unsafe.Sizeof(llmRef{})) +
		4*(len(s.look.byID)+len(s.look.byCall)+len(s.look.ordered))
}

// listAll lists every case, in start order.
func listAll(s *store) []string {
	ids, _, more := s.list(caseFilter{}, nil, math.MaxInt)
	if more {
		panic("list: more after an unbounded page")
	}
	return ids
}

// A refresh grows the index's records under the lock that lookups hold: adding a file whose
// cases need new chunks while lookups run is not a data race (go test -race).
func TestAddingCasesGrowsTheRecordsUnderTheLock(t *testing.T) {
	file := func(from, n int) *fileIndex {
		fi := &fileIndex{summaries: newSummaryTable(), rows: int64(n)}
		for i := range n {
			var k hexKey
			binary.BigEndian.PutUint64(k[8:], uint64(from+i))
			fi.entries = append(fi.entries, caseEntry{id: k, pos: uint32(i)})
			fi.summaryOf = append(fi.summaryOf, 0)
		}
		return fi
	}
	s := newStoreOf(newLocalSource(t.TempDir()), 4)
	var fresh freshEntries
	require.NoError(t, s.add("a", file(0, 1), &fresh))
	_, err := s.publish(fresh)
	require.NoError(t, err)
	id := s.entries.at(0).id.String()
	started, stop, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				assert.True(t, s.has(id))
			}
			if i == 0 {
				close(started)
			}
		}
	}()
	<-started
	fresh = freshEntries{}
	require.NoError(t, s.add("b", file(1, 3*recordsPerChunk), &fresh)) // three chunks more
	close(stop)
	<-done
}
