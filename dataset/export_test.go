package dataset

import (
	"io"

	"github.com/reprise-dev/reprise/replaycase"
)

// Hooks for the external tests (package dataset_test, which may import the fault injectors
// that themselves import this package).

func ReadIndexFrom(in io.ReaderAt, size int64) ([]IndexEntry, error) { return readIndex(in, size) }

// SetAfterRename makes publishing call fn after each rename; an error simulates a crash.
func SetAfterRename(w *Writer, fn func(renamed int) error) { w.afterRename = fn }

func StagingOf(w *Writer) string { return w.cfg.Staging }

func ConfigOf(w *Writer) WriterConfig { return w.cfg }

const BatchPrefix = batchPrefix

// StoreSpanIDsOnce and FillSpanIDs are the two halves of storing span ids once.
func StoreSpanIDsOnce(c *replaycase.Case) (CaseRow, bool) { return storeSpanIDsOnce(c) }

func FillSpanIDs(c *replaycase.Case) { fillSpanIDs(c) }
