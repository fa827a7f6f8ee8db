package dataset_test

import (
	"os"
	"path/filepath"
	"testing"

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
