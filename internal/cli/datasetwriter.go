package cli

import (
	"fmt"
	"time"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// writeCases adds cases to the dataset at root through the dataset package's writer (atomic
// publish, the same files the exporter writes), staging next to root as the exporter does
// by default.
func writeCases(root string, cases []*replaycase.Case) error {
	w, err := dataset.NewWriter(dataset.WriterConfig{
		Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100_000, RowGroupRows: 5_000,
	})
	if err != nil {
		return err
	}
	// Batches a crashed collector or command committed are published before ours.
	if _, err := w.Recover(time.Now().Add(-15 * time.Minute)); err != nil {
		return fmt.Errorf("recovering %s: %w", root, err)
	}
	if _, err := w.Write(cases); err != nil {
		return err
	}
	return w.Close()
}
