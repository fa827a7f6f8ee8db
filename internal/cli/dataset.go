package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// defaultDataset is where config/local.yaml writes.
const defaultDataset = "./reprise-data"

// readDataset reads every case row of the cases/ and quarantine/ datasets under root. A case
// superseded by a later row with the same case_id (a re-delivered or re-driven run) appears
// once, as its latest row by file name (file names are time-ordered UUIDv7s).
func readDataset(root string) ([]*replaycase.Case, error) {
	return scanDataset(root, func(c *replaycase.Case) (*replaycase.Case, bool) {
		cc := *c // c points into the scan's read buffer: keep this row only, not its neighbours
		return &cc, true
	})
}

// rowsPerScan is how many case rows a scan decodes at a time: what it holds besides what pick
// keeps.
const rowsPerScan = 64

// scanDataset reads the case rows of the cases/ and quarantine/ datasets under root a few at a
// time and keeps, for each case_id, what pick makes of its latest row by file name (file names
// are time-ordered UUIDv7s); a case whose latest row pick declines is left out, even if an
// older row of it was kept. So `reprise ls` and `reprise ci` hold what they print or run, not
// every row of the dataset. The values come in order of the cases' start times.
func scanDataset[T any](root string, pick func(*replaycase.Case) (T, bool)) ([]T, error) {
	if err := checkRoot(root, true); err != nil {
		return nil, err
	}
	files, err := dataset.NewLister(root, dataset.Cases, dataset.Quarantine).Next()
	if err != nil {
		return nil, err
	}
	dataset.InWriteOrder(files)
	type kept struct {
		start time.Time
		value T
	}
	byID := map[string]kept{}
	listed := map[string]bool{}
	var order []string // case ids by their first row: the order among equal start times
	for _, f := range files {
		err := dataset.ScanCases(f.Path, 0, rowsPerScan, func(_ int64, c *dataset.CaseRow) error {
			v, ok := pick(c)
			if !ok {
				delete(byID, c.CaseID) // a later row decides: an older one no longer counts
				return nil
			}
			if !listed[c.CaseID] {
				listed[c.CaseID] = true
				order = append(order, c.CaseID)
			}
			byID[c.CaseID] = kept{start: c.StartTime, value: v}
			return nil
		})
		if goneSinceListed(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f.Path, err)
		}
	}
	out := make([]kept, 0, len(byID))
	for _, id := range order {
		if k, ok := byID[id]; ok {
			out = append(out, k)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	values := make([]T, len(out))
	for i, k := range out {
		values[i] = k.value
	}
	return values, nil
}

// loadCase resolves what a user names a case by: a JSON file holding one case (the dataset's
// column names as keys), a Parquet file holding one case row, or a case id (or a unique prefix
// of one) in the dataset at root. A case named by id is found in the files' index columns, and
// only the file holding it is read whole: show, diff, export and mutate then read one file of
// a dataset, not every row of every file.
func loadCase(ref, root string) (*replaycase.Case, error) {
	if st, err := os.Stat(ref); err == nil && !st.IsDir() {
		return caseFile(ref)
	}
	if strings.TrimSpace(ref) == "" {
		return nil, errors.New("empty case id: it would name every case")
	}
	loc, err := findCase(ref, root)
	if err != nil {
		return nil, err
	}
	rows, err := dataset.ReadCases(loc.path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", loc.path, err)
	}
	if loc.row >= int64(len(rows)) || rows[loc.row].CaseID != loc.id {
		return nil, fmt.Errorf("%s changed while it was read: case %s is no longer row %d", loc.path, loc.id, loc.row)
	}
	return &rows[loc.row], nil
}

// caseLocation is where a case's row is.
type caseLocation struct {
	id   string
	path string
	row  int64
}

// goneSinceListed tells whether a data file listed a moment ago could not be opened because it
// is gone: retention deletes an expired partition's files while a command reads the dataset,
// and a command reads what is there instead of failing on data that expired meanwhile.
func goneSinceListed(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// findCase locates the case ref names (its id, or a unique prefix of one) in the dataset at
// root, reading only the index columns. Of a case with several rows (a re-delivered or
// re-driven run), the latest by file name is taken, as readDataset does.
func findCase(ref, root string) (caseLocation, error) {
	if err := checkRoot(root, true); err != nil {
		return caseLocation{}, err
	}
	files, err := dataset.NewLister(root, dataset.Cases, dataset.Quarantine).Next()
	if err != nil {
		return caseLocation{}, err
	}
	dataset.InWriteOrder(files)
	found := map[string]caseLocation{}
	for _, f := range files {
		entries, err := dataset.ReadIndex(f.Path)
		if goneSinceListed(err) {
			continue
		}
		if err != nil {
			return caseLocation{}, fmt.Errorf("reading %s: %w", f.Path, err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.CaseID, ref) {
				found[e.CaseID] = caseLocation{id: e.CaseID, path: f.Path, row: e.Row}
			}
		}
	}
	if loc, ok := found[ref]; ok {
		return loc, nil
	}
	switch len(found) {
	case 1:
		for _, loc := range found {
			return loc, nil
		}
	case 0:
		return caseLocation{}, fmt.Errorf("no case %q in dataset %s (and no file of that name)", ref, root)
	}
	return caseLocation{}, fmt.Errorf("%q names %d cases in %s: give more of the id", ref, len(found), root)
}

func caseFile(path string) (*replaycase.Case, error) {
	if strings.HasSuffix(path, ".parquet") {
		rows, err := dataset.ReadCases(path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if len(rows) != 1 {
			// A file of several cases is an export: its cases are reached in a dataset.
			return nil, fmt.Errorf("%s holds %d cases, not one: add them to a dataset with `reprise import %s --dataset DIR`, then name one by id with --dataset DIR", path, len(rows), path)
		}
		return &rows[0], nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c replaycase.Case
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s is not a case in JSON: %w", path, err)
	}
	if c.CaseID == "" {
		return nil, fmt.Errorf("%s has no case_id: not a case", path)
	}
	return &c, nil
}
