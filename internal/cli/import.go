package cli

import (
	"fmt"
	"io"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// runImport adds the cases of an exported file to a dataset, keeping their ids and every
// column. A case whose id the dataset already holds is skipped, so importing the same file
// twice adds nothing.
func runImport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("import", "usage: reprise import FILE --dataset DIR\n  FILE: a file written by reprise export")
	root := fs.String("dataset", "", "dataset root to add the cases to (required; created if missing)")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	if len(pos) != 1 || *root == "" {
		return usageError(stdout, stderr, fs, fmt.Errorf("want one file and --dataset"))
	}
	rows, err := dataset.ReadCases(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "reprise import:", err)
		return ExitError
	}
	all := make([]*replaycase.Case, len(rows))
	for i := range rows {
		all[i] = &rows[i]
	}
	add, err := writeNewCases(*root, all, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "reprise import:", err)
		return ExitError
	}
	fmt.Fprintf(stdout, "imported %d cases into %s; %d were already there\n", len(add), *root, len(rows)-len(add))
	return ExitOK
}

// caseIDsIn is the set of case ids in cases/ and quarantine/ under root (empty when root does
// not exist yet), read from the light index columns.
func caseIDsIn(root string) (map[string]bool, error) {
	files, err := dataset.NewLister(root, dataset.Cases, dataset.Quarantine).Next()
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, f := range files {
		entries, err := dataset.ReadIndex(f.Path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			ids[e.CaseID] = true
		}
	}
	return ids, nil
}
