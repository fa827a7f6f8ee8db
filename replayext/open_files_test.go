package replayext

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// casesFiles writes n cases in files of 200 (row groups of 50) and returns the files.
func casesFiles(t *testing.T, n int) []string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 200, RowGroupRows: 50})
	require.NoError(t, err)
	for lo := 0; lo < n; lo += 200 {
		var batch []*replaycase.Case
		for i := lo; i < min(lo+200, n); i++ {
			batch = append(batch, syntheticCase(i, 100))
		}
		_, err := w.Write(batch)
		require.NoError(t, err)
	}
	files, err := filepath.Glob(filepath.Join(root, dataset.Cases, "*", "*.parquet"))
	require.NoError(t, err)
	require.Len(t, files, (n+199)/200)
	return files
}

// Reads through the open files are the rows dataset.ReadCase reads, whatever the row group;
// no more files stay open than the bound, and the others are closed.
func TestOpenFilesReadTheRowsAndStayBounded(t *testing.T) {
	files := casesFiles(t, 1000)
	var opened []*dataset.CaseFile
	o := &openFiles{version: localVersion, open: func(_ context.Context, path string) (*dataset.CaseFile, error) {
		f, err := dataset.OpenCaseFile(path)
		opened = append(opened, f)
		return f, err
	}}
	for _, f := range files {
		for _, row := range []int64{0, 49, 50, 123, 199} {
			got, err := o.readCase(t.Context(), f, row)
			require.NoError(t, err)
			want, err := dataset.ReadCase(f, row)
			require.NoError(t, err)
			want.RawSpans, want.RawEvents = nil, nil
			assert.Equal(t, want, got)
		}
	}
	assert.Len(t, opened, len(files), "each file opened once while it is read")
	assert.NotEmpty(t, o.files)
	assert.LessOrEqual(t, len(o.files), maxOpenFiles)
	assert.LessOrEqual(t, o.held, int64(maxOpenFooterBytes))
	_, err := opened[0].ReadCase(0)
	assert.Error(t, err, "an evicted file is closed")
	_, err = o.readCase(t.Context(), files[0], 200)
	assert.ErrorContains(t, err, "out of range")
	o.close()
	assert.Empty(t, o.files)
	_, err = opened[len(opened)-1].ReadCase(0)
	assert.Error(t, err, "closed on close")
}

// A file replaced under the same path is read anew; a file gone is forgotten and reported.
func TestOpenFilesNoticeAReplacedOrRemovedFile(t *testing.T) {
	files := casesFiles(t, 400)
	o := &openFiles{open: openLocal, version: localVersion}
	first, err := o.readCase(t.Context(), files[0], 5)
	require.NoError(t, err)
	other, err := os.ReadFile(files[1])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(files[0]+".tmp", other, 0o644))
	require.NoError(t, os.Rename(files[0]+".tmp", files[0]))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(files[0], later, later)) // a different version even within the clock's resolution
	second, err := o.readCase(t.Context(), files[0], 5)
	require.NoError(t, err)
	assert.NotEqual(t, first.CaseID, second.CaseID)
	require.Len(t, o.files, 1)

	require.NoError(t, os.Remove(files[0]))
	_, err = o.readCase(t.Context(), files[0], 5)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Empty(t, o.files, "forgotten")
}

// Concurrent reads of more files than stay open: a file evicted during a read is closed only
// when the read ends (run with -race).
func TestOpenFilesConcurrentReads(t *testing.T) {
	files := casesFiles(t, 1000)
	o := &openFiles{open: openLocal, version: localVersion}
	defer o.close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				f := files[(g+i)%len(files)]
				c, err := o.readCase(t.Context(), f, int64((g*131+i*17)%200))
				if !assert.NoError(t, err) {
					return
				}
				assert.NotEmpty(t, c.CaseID)
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, len(o.files), maxOpenFiles)
}

// A file about to be opened first closes the least recently used ones it would push over the
// bounds: the file it replaces and its own footer are never held at once.
func TestOpenFilesMakeRoomBeforeOpening(t *testing.T) {
	files := casesFiles(t, 1400)
	var o *openFiles
	opens := 0
	o = &openFiles{version: localVersion, open: func(_ context.Context, path string) (*dataset.CaseFile, error) {
		opens++
		var largest int64
		for _, f := range o.files {
			largest = max(largest, f.estimate())
		}
		assert.Less(t, len(o.files), maxOpenFiles, "open %d", opens)
		assert.LessOrEqual(t, o.held+largest, int64(maxOpenFooterBytes), "open %d", opens)
		return dataset.OpenCaseFile(path)
	}}
	defer o.close()
	for range 2 {
		for _, f := range files {
			_, err := o.readCase(t.Context(), f, 7)
			require.NoError(t, err)
		}
	}
	assert.Equal(t, 2*len(files), opens, "more files than stay open: each read opens one")
}

// A listing's summaries through the open files are those of the rows read in full, and leave
// the file open for the reads of its cases that follow.
func TestOpenFilesReadSummaries(t *testing.T) {
	files := casesFiles(t, 400)
	o := &openFiles{open: openLocal, version: localVersion}
	defer o.close()
	rows := []int64{199, 0, 50, 49, 120, 0}
	sums, err := o.readSummaries(t.Context(), files[1], rows)
	require.NoError(t, err)
	require.Len(t, sums, 5)
	for _, row := range rows {
		c, err := dataset.ReadCase(files[1], row)
		require.NoError(t, err)
		assert.Equal(t, dataset.SummaryOf(c), sums[row], "row %d", row)
	}
	require.Len(t, o.files, 1)
	assert.Equal(t, files[1], o.files[0].path)
	_, err = o.readSummaries(t.Context(), files[1], []int64{200})
	assert.ErrorContains(t, err, "out of range")
}
