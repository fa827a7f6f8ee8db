package cli

import (
	"fmt"
	"io"

	"github.com/reprise-dev/reprise/casediff"
)

func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("diff", "usage: reprise diff A B [--dataset DIR] [--format json|markdown]\n  A, B: case ids (or unique prefixes) in the dataset, or case files (.json, .parquet)\n  exit 0: no difference, 1: differences, 2: error")
	dataset := fs.String("dataset", defaultDataset, "dataset root the case ids are looked up in")
	format := fs.String("format", "markdown", "output format: json (the contract, docs/diff.md) or markdown")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	if len(pos) != 2 {
		return usageError(stdout, stderr, fs, fmt.Errorf("want two cases, got %d", len(pos)))
	}
	if *format != "json" && *format != "markdown" {
		return usageError(stdout, stderr, fs, fmt.Errorf("--format %q: want json or markdown", *format))
	}
	a, err := loadCase(pos[0], *dataset)
	if err != nil {
		fmt.Fprintln(stderr, "reprise diff:", err)
		return ExitError
	}
	b, err := loadCase(pos[1], *dataset)
	if err != nil {
		fmt.Fprintln(stderr, "reprise diff:", err)
		return ExitError
	}
	r := casediff.Compare(a, b)
	if *format == "json" {
		err = casediff.WriteJSON(stdout, r)
	} else {
		err = casediff.WriteMarkdown(stdout, r)
	}
	if err != nil {
		fmt.Fprintln(stderr, "reprise diff:", err)
		return ExitError
	}
	if len(r.Findings) > 0 {
		return ExitChanged
	}
	return ExitOK
}
