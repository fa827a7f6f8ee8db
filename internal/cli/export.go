package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/reprise-dev/reprise/dataset"
)

// runExport writes the named cases, as their current rows (every column, raw spans included),
// into one self-contained Parquet file that `reprise import` adds to another dataset.
func runExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("export", "usage: reprise export CASE... --out NEW_FILE [--dataset DIR]\n  CASE: a case id (or unique prefix) in the dataset, or a case file (.json, .parquet)")
	root := fs.String("dataset", defaultDataset, "dataset root the case ids are looked up in")
	out := fs.String("out", "", "the Parquet file to write (required; must not exist)")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	if len(pos) == 0 || *out == "" {
		return usageError(stdout, stderr, fs, fmt.Errorf("want at least one case and --out"))
	}
	// A new file: replacing one loses what it held (an earlier export, or a data file of a
	// dataset named by mistake).
	if _, err := os.Lstat(*out); err == nil {
		fmt.Fprintf(stderr, "reprise export: %s exists; remove it or name a new file\n", *out)
		return ExitError
	}
	var rows []dataset.CaseRow
	seen := map[string]bool{}
	for _, ref := range pos {
		c, err := loadCase(ref, *root)
		if err != nil {
			fmt.Fprintln(stderr, "reprise export:", err)
			return ExitError
		}
		if !seen[c.CaseID] {
			seen[c.CaseID] = true
			rows = append(rows, *c)
		}
	}
	if err := dataset.WriteCaseFile(*out, "zstd", rows); err != nil {
		fmt.Fprintln(stderr, "reprise export:", err)
		return ExitError
	}
	fmt.Fprintf(stdout, "exported %d cases to %s\n", len(rows), *out)
	return ExitOK
}
