// Command countrows counts the rows of a dataset root's cases/ and quarantine/ files, the
// distinct case ids, and the case ids with more than one row (what a crash must not add), and
// names the files it cannot read. It exits 1 when a file cannot be read.
//
//	go run ./scripts/countrows ./reprise-data
package main

import (
	"fmt"
	"os"

	"github.com/reprise-dev/reprise/dataset"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: countrows DATASET_ROOT")
		os.Exit(2)
	}
	files, rows, unreadable := 0, 0, 0
	ids := map[string]int{}
	for _, ds := range []string{dataset.Cases, dataset.Quarantine} {
		fs, err := dataset.NewLister(os.Args[1], ds).Next()
		if err != nil {
			fmt.Fprintln(os.Stderr, "countrows:", err)
			os.Exit(2)
		}
		for _, f := range fs {
			files++
			rs, err := dataset.ReadCases(f.Path)
			if err != nil {
				unreadable++
				fmt.Fprintln(os.Stderr, "countrows: unreadable:", err)
				continue
			}
			for _, r := range rs {
				rows++
				ids[r.CaseID]++
			}
		}
	}
	more := 0
	for _, n := range ids {
		if n > 1 {
			more++
		}
	}
	fmt.Printf("files %d rows %d case_ids %d case_ids_with_more_than_one_row %d unreadable_files %d\n", files, rows, len(ids), more, unreadable)
	if unreadable > 0 {
		os.Exit(1)
	}
}
