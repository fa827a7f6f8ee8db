package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// writeNewCases adds to the dataset at root the cases whose ids it does not hold yet (each id
// once), through the dataset package's writer (atomic publish, the same files the exporter
// writes), staging next to root as the exporter does by default. It returns the cases added,
// and says on warn how many of their strings the writer repaired: invalid UTF-8 is stored
// with U+FFFD in its place, and what was written then differs from what was read.
func writeNewCases(root string, cases []*replaycase.Case, warn io.Writer) ([]*replaycase.Case, error) {
	return writeCases(root, cases, nil, warn)
}

// writeCases is writeNewCases, except that a case whose id the dataset holds is written again
// when again (if not nil) says so: the new row, in a newer file, is then the current row of
// that id, as a re-driven case's row supersedes its quarantine row. again is asked after the
// batches a crash left are published, so it sees every row the dataset holds.
func writeCases(root string, cases []*replaycase.Case, again func(*replaycase.Case) (bool, error), warn io.Writer) ([]*replaycase.Case, error) {
	if err := checkRoot(root, false); err != nil {
		return nil, err
	}
	w, err := dataset.NewWriter(dataset.WriterConfig{
		Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100_000, RowGroupRows: 5_000,
	})
	if err != nil {
		return nil, err
	}
	// Batches a crashed collector or command committed are published before ours, and before
	// the ids present are read: a case of an interrupted earlier import is then present, not
	// written a second time.
	if _, err := w.Recover(time.Now().Add(-15 * time.Minute)); err != nil {
		return nil, errors.Join(fmt.Errorf("recovering %s: %w", root, err), w.Close())
	}
	present, err := caseIDsIn(root)
	if err != nil {
		return nil, errors.Join(err, w.Close())
	}
	var add []*replaycase.Case
	added := map[string]bool{}
	for _, c := range cases {
		if added[c.CaseID] {
			continue // each id once
		}
		write := !present[c.CaseID]
		if !write && again != nil {
			if write, err = again(c); err != nil {
				return nil, errors.Join(err, w.Close())
			}
		}
		if write {
			added[c.CaseID] = true
			add = append(add, c)
		}
	}
	if len(add) > 0 {
		res, err := w.Write(add)
		if err != nil {
			return nil, errors.Join(err, w.Close())
		}
		if res.RepairedStrings > 0 {
			fmt.Fprintf(warn, "warning: %d strings of the cases written were not valid UTF-8; each invalid byte sequence was stored as U+FFFD\n", res.RepairedStrings)
		}
	}
	return add, w.Close()
}
