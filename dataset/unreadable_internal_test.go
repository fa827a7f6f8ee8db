package dataset

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// caseFileBytes is a one-row cases/ file whose footer names version.
func caseFileBytes(t *testing.T, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	pw := parquet.NewGenericWriter[CaseRow](&buf, parquet.KeyValueMetadata(SchemaVersionKey, version))
	_, err := pw.Write([]CaseRow{{CaseID: "a"}})
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	return buf.Bytes()
}

// failingReader fails every read, as a disk, a permission or a network does.
type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, syscall.EIO }

// An error in the file's own bytes wraps ErrUnreadable, since reading the file again cannot
// help; an error of reading it does not, since a later read may succeed.
func TestOpenTellsUnreadableBytesFromReadErrors(t *testing.T) {
	good := caseFileBytes(t, SchemaVersion)
	for _, tc := range []struct {
		name       string
		in         io.ReaderAt
		size       int
		unreadable bool
	}{
		{"not parquet", bytes.NewReader([]byte("not parquet")), len("not parquet"), true},
		{"empty", bytes.NewReader(nil), 0, true},
		// Found by FuzzACorruptFileIsReadOrRefused: parquet-go read the last 8 bytes at
		// offset -1, a failed read, so the file was read again at every poll.
		{"the magic and three bytes", bytes.NewReader([]byte("PAR1\x15\x00\x15")), 7, true},
		{"truncated footer", bytes.NewReader(good[:len(good)-3]), len(good) - 3, true},
		{"another schema version", bytes.NewReader(caseFileBytes(t, "replay-case.v99")), len(caseFileBytes(t, "replay-case.v99")), true},
		{"no schema version (not a dataset file)", bytes.NewReader(caseFileBytes(t, "")), len(caseFileBytes(t, "")), true},
		{"read error", failingReader{}, len(good), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openFile(tc.in, int64(tc.size))
			require.Error(t, err)
			assert.Equal(t, tc.unreadable, errors.Is(err, ErrUnreadable), err)
		})
	}
	_, err := openFile(failingReader{}, int64(len(good)))
	assert.ErrorIs(t, err, syscall.EIO, "the read error is kept")
	_, err = openFile(bytes.NewReader(good), int64(len(good)))
	assert.NoError(t, err)
}

// failsAfterOpen reads its bytes until fail is set, then fails every read, as a disk or a
// network that goes away while a file's rows are read.
type failsAfterOpen struct {
	*bytes.Reader
	fail atomic.Bool
}

func (r *failsAfterOpen) ReadAt(p []byte, off int64) (int, error) {
	if r.fail.Load() {
		return 0, syscall.EIO
	}
	return r.Reader.ReadAt(p, off)
}

// A read that fails while the rows are decoded is no error of the file's bytes: a later read
// may succeed, so no row is taken for lost.
func TestReadErrorInTheRowsIsNotUnreadable(t *testing.T) {
	good := caseFileBytes(t, SchemaVersion)
	in := &failsAfterOpen{Reader: bytes.NewReader(good)}
	df, err := openFile(in, int64(len(good)))
	require.NoError(t, err)
	in.fail.Store(true)
	err = scanCases(df, "a.parquet", 0, 1, func(int64, *CaseRow) error { return nil }, func(from, to int64, err error) {
		t.Errorf("rows %d to %d taken for lost: %v", from, to, err)
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EIO)
	assert.NotErrorIs(t, err, ErrUnreadable)
}

// countingReader counts the reads made through it.
type countingReader struct {
	io.ReaderAt
	reads atomic.Int64
}

func (r *countingReader) ReadAt(p []byte, off int64) (int, error) {
	r.reads.Add(1)
	return r.ReaderAt.ReadAt(p, off)
}

// Opening a file with its page index reads the offset indexes of all its column chunks at
// once, as parquet-go does: one read each was one ranged GET per column chunk (245 a row group
// of cases/) for a file in a bucket. The indexes read are the file's: a seek uses them.
func TestOffsetIndexesAreReadAtOnce(t *testing.T) {
	var buf bytes.Buffer
	pw := parquet.NewGenericWriter[CaseRow](&buf, parquet.KeyValueMetadata(SchemaVersionKey, SchemaVersion), parquet.MaxRowsPerRowGroup(2))
	for i := range 6 { // 3 row groups
		_, err := pw.Write([]CaseRow{{CaseID: string(rune('a' + i))}})
		require.NoError(t, err)
	}
	require.NoError(t, pw.Close())
	columns := len(schemaOf([]parquet.WriterOption{parquet.SchemaOf(CaseRow{})}).Columns())
	require.Greater(t, columns, 100)

	in := &countingReader{ReaderAt: bytes.NewReader(buf.Bytes())}
	df, err := openFile(in, int64(buf.Len()))
	require.NoError(t, err)
	opened := in.reads.Load()
	t.Logf("reads to open a file of %d row groups of %d columns: %d", len(df.pf.RowGroups()), columns, opened)
	assert.LessOrEqual(t, opened, int64(4), "the footer, and the offset indexes in one read")
	for _, rg := range df.pf.RowGroups() {
		for _, chunk := range rg.ColumnChunks() {
			index, err := chunk.OffsetIndex()
			require.NoError(t, err)
			require.Equal(t, 1, index.NumPages())
		}
	}
	assert.Equal(t, opened, in.reads.Load(), "every offset index was loaded at open")

	r := newRowReader[CaseRow](df)
	defer r.Close()
	require.NoError(t, r.SeekToRow(5))
	rows := make([]CaseRow, 1)
	n, err := r.Read(rows)
	require.Equal(t, 1, n, err)
	assert.Equal(t, "f", rows[0].CaseID)
}

// Checking a footer costs next to nothing beside parquet-go's own open: a merge opens every
// segment it reads. Listing the columns with Schema().Columns() to check the row counts built
// every column's path anew for each file, ~1,160 allocations more than parquet-go's ~1,340 for a
// cases/ file (and 1 % more heap allocated by a paced benchmark run).
func TestCheckingAFooterAllocatesLittle(t *testing.T) {
	good := caseFileBytes(t, SchemaVersion)
	in := bytes.NewReader(good)
	bare := testing.AllocsPerRun(10, func() {
		_, err := parquet.OpenFile(in, int64(len(good)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		require.NoError(t, err)
	})
	ours := testing.AllocsPerRun(10, func() {
		_, err := openFile(in, int64(len(good)), parquet.SkipPageIndex(true))
		require.NoError(t, err)
	})
	t.Logf("openFile: %v allocations; parquet.OpenFile: %v", ours, bare)
	assert.Less(t, ours-bare, 50.0, "openFile %v allocations, parquet.OpenFile %v", ours, bare)
}
