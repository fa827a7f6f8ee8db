package dataset_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// writeRows writes rows as a data file with small pages, so that the long columns of one row
// group span several pages and a row's values may start in one page and end in the next.
func writeRows[T any](t *testing.T, path string, rows []T, opts ...parquet.WriterOption) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	opts = append([]parquet.WriterOption{
		parquet.Compression(&parquet.Zstd), parquet.DataPageVersion(1), parquet.PageBufferSize(512),
		parquet.MaxRowsPerRowGroup(7), parquet.KeyValueMetadata(SchemaVersionKey, SchemaVersion),
	}, opts...)
	w := parquet.NewGenericWriter[T](f, opts...)
	_, err = w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

// assertReadsAsTheRowReader reads every row of path through a CaseFile, in an order that seeks
// back and forth, and compares each with parquet-go's row reader (ReadCases); the same for
// the rows' summaries.
func assertReadsAsTheRowReader(t *testing.T, path string) int {
	t.Helper()
	want, err := ReadCases(path)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	f, err := OpenCaseFile(path)
	require.NoError(t, err)
	defer f.Close()
	n := int64(len(want))
	order := []int64{n - 1, 0, n / 2}
	for row := n - 1; row >= 0; row -= 2 { // backwards, then forwards
		order = append(order, row)
	}
	order = append(order, rangeRows(len(want))...)
	for _, row := range order {
		got, err := f.ReadCase(row)
		require.NoError(t, err, "row %d", row)
		c := want[row]
		c.RawSpans, c.RawEvents = nil, nil
		require.Equal(t, &c, got, "%s row %d", path, row)
	}
	// A listing's summaries, read from the pages of their columns only.
	sums, err := ReadSummaries(path, order)
	require.NoError(t, err)
	require.Len(t, sums, len(want))
	for row := range want {
		require.Equal(t, SummaryOf(&want[row]), sums[int64(row)], "%s summary of row %d", path, row)
	}
	_, err = ReadSummaries(path, []int64{n})
	assert.ErrorContains(t, err, fmt.Sprintf("the file has %d rows", n))
	// The same through the open file: each column's pages once for all the rows asked, in
	// several orders and subsets (every row, every third, one, the last few).
	for _, rows := range [][]int64{order, everyNth(n, 3), everyNth(n, 37), {n / 2}, {n - 1, n - 2, n - 1}, nil} {
		sums, err := f.ReadSummaries(rows)
		require.NoError(t, err)
		require.Len(t, sums, len(slices.Compact(slices.Sorted(slices.Values(rows)))))
		for row, got := range sums {
			require.Equal(t, SummaryOf(&want[row]), got, "%s summary of row %d through the open file", path, row)
		}
	}
	_, err = f.ReadSummaries([]int64{0, n})
	assert.ErrorContains(t, err, fmt.Sprintf("row %d out of range (the file has %d rows)", n, n))
	_, err = f.ReadSummaries([]int64{-1})
	assert.ErrorContains(t, err, "row -1 out of range")
	return len(want)
}

// The page reader of a CaseFile reads each row as parquet-go's row reader does: real cases
// and the edge shapes, accepted and quarantined (raw spans stored, not read), across row
// groups and pages, in files written by the dataset writer and with pages of a few hundred
// bytes.
func TestCaseFileReadsAsTheRowReader(t *testing.T) {
	cases := append(fixtureCases(t), edgeCases()...)
	quarantined := *cases[0]
	quarantined.CaseID = "f0000000000000000000000000000000"
	quarantined.Status = replaycase.StatusQuarantined
	quarantined.RawSpans, quarantined.RawEvents = []byte("spans"), []byte("events")
	cases = append(cases, &quarantined)

	w := newWriter(t)
	_, err := w.Write(cases)
	require.NoError(t, err)
	read := 0
	for _, path := range caseFiles(t, w.Root()) {
		read += assertReadsAsTheRowReader(t, path)
	}
	assert.Equal(t, len(cases), read)

	dir := t.TempDir()
	rows := make([]CaseRow, len(cases))
	for i, c := range cases {
		rows[i] = *c
	}
	small := filepath.Join(dir, "small-pages.parquet")
	writeRows(t, small, rows)
	assert.Equal(t, len(rows), assertReadsAsTheRowReader(t, small))
	// Row groups of many pages: a read of several rows goes forward within a page and to the
	// next, and seeks over the pages that hold none of them.
	var many []CaseRow
	for i := range 300 {
		c := rows[i%len(rows)]
		c.CaseID = fmt.Sprintf("%032x", i)
		many = append(many, c)
	}
	manyPages := filepath.Join(dir, "many-pages.parquet")
	writeRows(t, manyPages, many, parquet.MaxRowsPerRowGroup(200), parquet.PageBufferSize(256))
	assert.Equal(t, len(many), assertReadsAsTheRowReader(t, manyPages))

	// Span ids stored once: the page reader puts the copies back as the file's readers do.
	once := make([]CaseRow, 0, len(cases))
	for _, c := range cases {
		if row, ok := StoreSpanIDsOnce(c); ok {
			once = append(once, row)
		}
	}
	idsOnce := filepath.Join(dir, "ids-once.parquet")
	writeRows(t, idsOnce, once, parquet.KeyValueMetadata(CaseIDsLayoutKey, CaseIDsLayout))
	assert.Equal(t, len(once), assertReadsAsTheRowReader(t, idsOnce))
	f, err := OpenCaseFile(idsOnce)
	require.NoError(t, err)
	defer f.Close()
	filled := 0
	for i, c := range cases[:len(once)] {
		got, err := f.ReadCase(int64(i))
		require.NoError(t, err)
		require.Len(t, got.ToolCalls, len(c.ToolCalls))
		for j, tc := range c.ToolCalls {
			assert.Equal(t, tc.SpanID, got.ToolCalls[j].SpanID, "row %d tool call %d", i, j)
			assert.Equal(t, tc.RequestedBy, got.ToolCalls[j].RequestedBy, "row %d tool call %d", i, j)
			if tc.SpanID != "" && once[i].ToolCalls[j].SpanID == "" {
				filled++
			}
		}
	}
	assert.Positive(t, filled, "the file stores some span ids once")
}

// olderCase is a row of a file written before most of the columns existed: a read converts
// it to the current schema as the row reader does (missing columns empty).
type olderCase struct {
	CaseID        string    `parquet:"case_id"`
	SchemaVersion string    `parquet:"schema_version,dict"`
	Status        string    `parquet:"status,dict"`
	StartTime     time.Time `parquet:"start_time,timestamp(microsecond)"`
	AgentName     string    `parquet:"agent_name,optional,dict"`
	RawSpans      []byte    `parquet:"raw_spans,optional"`
}

func TestCaseFileReadsAnOlderSchemaAsTheRowReader(t *testing.T) {
	var rows []olderCase
	for _, c := range edgeCases() {
		rows = append(rows, olderCase{CaseID: c.CaseID, SchemaVersion: c.SchemaVersion, Status: string(c.Status),
			StartTime: c.StartTime, AgentName: c.AgentName, RawSpans: []byte(c.CaseID)})
	}
	path := filepath.Join(t.TempDir(), "older.parquet")
	writeRows(t, path, rows)
	assert.Equal(t, len(rows), assertReadsAsTheRowReader(t, path))
	f, err := OpenCaseFile(path)
	require.NoError(t, err)
	defer f.Close()
	got, err := f.ReadCase(4)
	require.NoError(t, err)
	assert.Equal(t, rows[4].CaseID, got.CaseID)
	assert.Equal(t, "agent-0", got.AgentName)
	assert.Nil(t, got.RawSpans)
}

// BenchmarkCaseFileReadCase reads rows of a cases/ file of the scale dataset of
// docs/benchmarks.md spread over its row groups, through one open CaseFile:
//
//	REPRISE_SCALE_DIR=/tmp/scale go test -run '^$' -bench BenchmarkCaseFileReadCase -benchmem ./dataset/
func BenchmarkCaseFileReadCase(b *testing.B) {
	files := scaleFiles(b)
	f, err := OpenCaseFile(files[0])
	require.NoError(b, err)
	defer f.Close()
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.ReadCase(int64(i*997) % 10_000); err != nil {
			b.Fatal(err)
		}
	}
}

// A listing page of 1,000 cases of one file of the scale dataset: through an open file, each
// summary column's pages once ("open"), and through parquet-go's row reader ("rowreader").
func BenchmarkReadSummaries(b *testing.B) {
	files := scaleFiles(b)
	rows := make([]int64, 1000)
	for i := range rows {
		rows[i] = 3000 + int64(i)
	}
	b.Run("open", func(b *testing.B) {
		f, err := OpenCaseFile(files[0])
		require.NoError(b, err)
		defer f.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.ReadSummaries(rows); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rowreader", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ReadSummaries(files[0], rows); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// scaleFiles are the cases/ files of the dataset REPRISE_SCALE_DIR names; the benchmark is
// skipped without one.
func scaleFiles(b *testing.B) []string {
	dir := os.Getenv("REPRISE_SCALE_DIR")
	if dir == "" {
		b.Skip("set REPRISE_SCALE_DIR to a dataset written by TestGenerateScaleDataset")
	}
	files, err := filepath.Glob(filepath.Join(dir, Cases, "*", "*.parquet"))
	require.NoError(b, err)
	require.NotEmpty(b, files)
	return files
}

// everyNth is rows 0, k, 2k… of n rows.
func everyNth(n, k int64) []int64 {
	var rows []int64
	for row := int64(0); row < n; row += k {
		rows = append(rows, row)
	}
	return rows
}
