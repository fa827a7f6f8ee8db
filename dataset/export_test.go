package dataset

import "io"

// Hooks for the external tests (package dataset_test, which may import the fault injectors
// that themselves import this package).

func ReadIndexFrom(in io.ReaderAt, size int64) ([]IndexEntry, error) { return readIndex(in, size) }

// SetAfterRename makes publishing call fn after each rename; an error simulates a crash.
func SetAfterRename(w *Writer, fn func(renamed int) error) { w.afterRename = fn }

func StagingOf(w *Writer) string { return w.cfg.Staging }

func ConfigOf(w *Writer) WriterConfig { return w.cfg }

const BatchPrefix = batchPrefix
