package dataset_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go/format"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
)

// A page header that claims a compressed page of 1 GiB, in a published file of ~100 KiB, makes
// every reader return an error that wraps ErrUnreadable, having allocated no more than
// allocBound: parquet-go allocates the size a header claims before it reads the page, and the
// reader refuses the header before it does. The first data page of case_id, which every reader
// reads, is forged in each row group, so that the reads of single rows meet one too.
func TestAPageHeaderThatClaimsAGigabyteIsRefusedBeforeItIsAllocated(t *testing.T) {
	for i, compression := range []string{"zstd", "none"} {
		t.Run(compression, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "forged.parquet")
			require.NoError(t, os.WriteFile(path, corruptBase(t, i), 0o644))
			for g := range 3 {
				testdataset.CorruptPage(t, path, g, testdataset.PageSizeGigabyte, "case_id")
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			for name, err := range readEveryWay(t, path, b) {
				assert.ErrorIs(t, err, ErrUnreadable, name)
			}
		})
	}
}

// A page header cut by the end of a read is decoded with the bytes of the next read before
// they are returned: with parquet-go reading column chunks 16 to 100 bytes at a time, every
// header spans reads; the sound file's rows are all read, and a header that claims 1 GiB is
// refused without its gigabyte allocated.
func TestAPageHeaderCutByTheEndOfAReadIsChecked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.parquet")
	require.NoError(t, os.WriteFile(path, corruptBase(t, 0), 0o644))
	forged := filepath.Join(t.TempDir(), "forged.parquet")
	require.NoError(t, os.WriteFile(forged, corruptBase(t, 0), 0o644))
	testdataset.CorruptPage(t, forged, 1, testdataset.PageSizeGigabyte, "case_id")
	for _, size := range []int{16, 17, 100} {
		rows, err := ReadCasesBufferedBy(path, size)
		require.NoError(t, err, "reading %d bytes at a time", size)
		assert.Len(t, rows, 25)

		allocated := allocatedBy(func() { _, err = ReadCasesBufferedBy(forged, size) })
		assert.ErrorIs(t, err, ErrUnreadable, "reading %d bytes at a time", size)
		assert.ErrorContains(t, err, "claims a page of 1073741824 bytes")
		assert.Less(t, allocated, allocBound(len(corruptBase(t, 0))), "bytes allocated reading %d bytes at a time", size)
	}
}

// A header of a page the offset index places, past a column chunk's first, is checked when a
// reader seeks to it: ReadRows of a row of the second page of raw_spans in the middle row
// group, whose header claims 1 GiB, is refused without its gigabyte allocated.
func TestAPageHeaderOfAPageSoughtIsChecked(t *testing.T) {
	path, pf, index := secondPageOfRawSpansCorrupt(t, testdataset.PageSizeGigabyte)
	info, err := os.Stat(path)
	require.NoError(t, err)
	row := pf.RowGroups()[0].NumRows() + index.FirstRowIndex(1) + 1

	allocated := allocatedBy(func() { _, err = ReadRows(path, []int64{row}) })
	assert.ErrorIs(t, err, ErrUnreadable)
	assert.ErrorContains(t, err, "claims a page of 1073741824 bytes")
	assert.Less(t, allocated, allocBound(int(info.Size())), "bytes allocated")
}

// A data page header that claims 2^30 values, in agent_name (optional: its definition levels
// are decoded), makes ReadCases return an error that wraps ErrUnreadable without the gigabyte
// parquet-go allocates for their levels: the footer says the column chunk holds 10 values.
func TestAPageHeaderThatClaimsAGigabyteOfValuesIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "forged.parquet")
	require.NoError(t, os.WriteFile(path, corruptBase(t, 0), 0o644))
	testdataset.CorruptPage(t, path, 0, testdataset.PageValuesGigabyte, "agent_name")

	var err error
	allocated := allocatedBy(func() { _, err = ReadCases(path) })
	assert.ErrorIs(t, err, ErrUnreadable)
	assert.ErrorContains(t, err, "claims 1073741824 values")
	assert.Less(t, allocated, allocBound(len(corruptBase(t, 0))), "bytes allocated")
}

// A page header and the footer forged together: the footer claims 1 GiB uncompressed for the
// column chunk of case_id in every row group, and the first data page's header claims that
// page alone is 1 GiB uncompressed, which parquet-go allocates before it decompresses the
// page. Every reader returns an error that wraps ErrUnreadable without the gigabyte allocated,
// whatever the file's codec: what a page's bytes decompress to is bounded by the codec (the
// frames of zstd, the ratio of Snappy and gzip, the page's own bytes uncompressed).
func TestAPageHeaderAndAFooterThatBothClaimAGigabyteAreRefused(t *testing.T) {
	for i, compression := range baseCodecs {
		t.Run(compression, func(t *testing.T) {
			base := corruptBase(t, i%2+i/2*0x80)
			path := filepath.Join(t.TempDir(), "forged.parquet")
			require.NoError(t, os.WriteFile(path, base, 0o644))
			for g := range 3 {
				testdataset.CorruptPage(t, path, g, testdataset.PageUncompressedGigabyte, "case_id")
			}
			caseID := testdataset.OpenParquet(t, path).Schema().Columns()
			column := slices.IndexFunc(caseID, func(p []string) bool { return slices.Equal(p, []string{"case_id"}) })
			require.GreaterOrEqual(t, column, 0)
			testdataset.EditFooter(t, path, func(m *format.FileMetaData) {
				for g := range m.RowGroups {
					m.RowGroups[g].Columns[column].MetaData.TotalUncompressedSize = 1 << 30
				}
			})
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			errs := readEveryWay(t, path, b)
			require.NotEmpty(t, errs)
			for name, err := range errs {
				assert.ErrorIs(t, err, ErrUnreadable, name)
				assert.ErrorContains(t, err, refusals[compression], name)
			}
		})
	}
}

// refusals are what the error of TestAPageHeaderAndAFooterThatBothClaimAGigabyteAreRefused says,
// by codec: the zstd pages' frames are walked, the others are bounded by a ratio.
var refusals = map[string]string{
	"zstd":   "claims its zstd frames decompress to 1073741824 bytes; they decompress to at most",
	"none":   "(its bytes are not compressed)",
	"snappy": "(Snappy decompresses at most 22 times)",
	"gzip":   "(gzip decompresses at most 1032 times)",
}

// The sound files of every codec the writer offers are read whole, however parquet-go's reads
// cut their page headers and, for zstd, the frame and block headers walked in their pages'
// bytes (pending until the next read), and however many rows a page holds.
func TestSoundFilesOfEveryCodecAreReadInReadsOfAnySize(t *testing.T) {
	for i, compression := range baseCodecs {
		path := filepath.Join(t.TempDir(), compression+".parquet")
		require.NoError(t, os.WriteFile(path, corruptBase(t, i%2+i/2*0x80), 0o644))
		for _, size := range []int{16, 17, 100, 4096} {
			rows, err := ReadCasesBufferedBy(path, size)
			require.NoError(t, err, "%s, reading %d bytes at a time", compression, size)
			assert.Len(t, rows, 25, "%s, reading %d bytes at a time", compression, size)
		}
	}
}
