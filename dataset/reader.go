package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/replaycase"
)

// File is one published data file.
type File struct {
	Dataset   string // Cases, Steps or Quarantine
	Partition string // the dt value, YYYY-MM-DD
	Path      string // the file's path (Root joined with the dataset, partition and name)
}

// fileOf parses <root>/<dataset>/dt=<day>/<name>.parquet.
func fileOf(root, path string) (File, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return File{}, false
	}
	ds, day, ok := isDataFile(filepath.ToSlash(rel))
	return File{Dataset: ds, Partition: day, Path: path}, ok
}

// Lister lists the data files of some datasets under a root, incrementally: each Next returns
// only the files it has not returned before. It is safe for concurrent use.
type Lister struct {
	root     string
	datasets []string

	mu   sync.Mutex
	seen map[string]bool
}

// NewLister lists the files of the given datasets (e.g. Cases, Quarantine) under root.
func NewLister(root string, datasets ...string) *Lister {
	return &Lister{root: filepath.Clean(root), datasets: datasets, seen: map[string]bool{}}
}

// Next returns the files published since the last call (all of them on the first call),
// ordered by dataset, partition and name (names are UUIDv7, so that is creation order within a
// partition). A dataset directory that does not exist yet has no files.
func (l *Lister) Next() ([]File, error) {
	var out []File
	var errs []error
	for _, dataset := range l.datasets {
		dir := filepath.Join(l.root, dataset)
		parts, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range parts {
			if !p.IsDir() || !strings.HasPrefix(p.Name(), PartitionKey+"=") {
				continue
			}
			names, err := os.ReadDir(filepath.Join(dir, p.Name()))
			if errors.Is(err, fs.ErrNotExist) {
				continue // emptied and removed by retention since the dataset was listed
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, n := range names {
				if f, ok := fileOf(l.root, filepath.Join(dir, p.Name(), n.Name())); ok && !n.IsDir() && l.markSeen(f.Path) {
					out = append(out, f)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// InWriteOrder sorts files in the order they were written: by file name (a UUIDv7), across
// datasets and partitions. The current row of a case is its row in the last of them that holds
// it (cases/ and quarantine/ together), so whoever reads rows in this order, or copies them in
// it, sees a later row supersede an earlier one.
func InWriteOrder(files []File) {
	sort.SliceStable(files, func(i, j int) bool { return filepath.Base(files[i].Path) < filepath.Base(files[j].Path) })
}

func (l *Lister) markSeen(path string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[path] {
		return false
	}
	l.seen[path] = true
	return true
}

// Retry makes the next Next return f again (for a file the caller could not read).
func (l *Lister) Retry(f File) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.seen, f.Path)
}

// IndexEntry is the light view of one case row: what a replay index needs to find a case and
// its recorded model calls, and to list it, without its content (messages, tool calls,
// retrievals, steps' inputs and outputs, raw spans).
type IndexEntry struct {
	Row         int64 // the row number in the file, for ReadCase
	CaseID      string
	Status      replaycase.Status
	StartTime   time.Time
	AgentName   string
	ServiceName string
	Reasons     []string // reason codes
	LLMSteps    []LLMStepRef

	// For listings.
	SchemaVersion  string
	EndTime        time.Time
	ClosedBy       replaycase.CloseCause
	ConversationID string
	Provenance     replaycase.Provenance
	Usage          replaycase.Usage
	ReasonDetails  []replaycase.Reason // the reasons with their detail and span id
}

// LLMStepRef is one LLM step of a case: its index in the case's steps and its call-site id.
// CallSiteID is empty in files written before call-site ids existed; the caller computes it
// from the step (ReadCase) then.
type LLMStepRef struct {
	Index          int
	CallSiteID     string
	CallSiteFields []string
}

// indexRow is the projection ReadIndex reads: parquet-go decodes only the columns named here,
// so free text, messages and raw spans are never read from disk.
type indexRow struct {
	CaseID         string                `parquet:"case_id"`
	SchemaVersion  string                `parquet:"schema_version"`
	Status         string                `parquet:"status"`
	Reasons        []replaycase.Reason   `parquet:"reasons,list"`
	ClosedBy       string                `parquet:"closed_by"`
	Provenance     replaycase.Provenance `parquet:"provenance"`
	StartTime      time.Time             `parquet:"start_time,timestamp(microsecond)"`
	EndTime        time.Time             `parquet:"end_time,timestamp(microsecond)"`
	AgentName      string                `parquet:"agent_name,optional"`
	ConversationID string                `parquet:"conversation_id,optional"`
	Usage          replaycase.Usage      `parquet:"usage"`
	Steps          []struct {
		Index          int64    `parquet:"index"`
		Kind           string   `parquet:"kind"`
		CallSiteID     string   `parquet:"call_site_id,optional"`
		CallSiteFields []string `parquet:"call_site_fields,list"`
	} `parquet:"steps,list"`
}

// indexBatch is how many rows ReadIndex decodes at a time.
const indexBatch = 256

// ReadIndex reads the index entries of a cases/ or quarantine/ file, one per row in file
// order, reading only the columns IndexEntry needs.
func ReadIndex(path string) ([]IndexEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	out, err := readIndex(f, info.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func readIndex(in io.ReaderAt, size int64) ([]IndexEntry, error) {
	df, err := openFile(in, size, parquet.SkipPageIndex(true))
	if err != nil {
		return nil, err
	}
	r := newRowReader[indexRow](df)
	defer r.Close()
	out := make([]IndexEntry, 0, min(r.NumRows(), indexBatch)) // not a forged count's capacity
	buf := make([]indexRow, indexBatch)
	for {
		n, err := r.Read(buf)
		zeroTimesBack(buf[:n])
		for _, row := range buf[:n] {
			e := IndexEntry{
				Row: int64(len(out)), CaseID: row.CaseID, Status: replaycase.Status(row.Status),
				StartTime: row.StartTime.UTC(), AgentName: row.AgentName, ServiceName: row.Provenance.ServiceName,
				SchemaVersion: row.SchemaVersion, EndTime: row.EndTime.UTC(), ClosedBy: replaycase.CloseCause(row.ClosedBy),
				ConversationID: row.ConversationID, Provenance: row.Provenance, Usage: row.Usage, ReasonDetails: row.Reasons,
			}
			for _, r := range row.Reasons {
				e.Reasons = append(e.Reasons, r.Code)
			}
			for _, st := range row.Steps {
				if replaycase.StepKind(st.Kind) == replaycase.StepLLM {
					e.LLMSteps = append(e.LLMSteps, LLMStepRef{Index: int(st.Index), CallSiteID: st.CallSiteID, CallSiteFields: st.CallSiteFields})
				}
			}
			out = append(out, e)
		}
		if errors.Is(err, io.EOF) {
			if err := df.rowsRead(-1, int64(len(out))); err != nil {
				return nil, err
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		clear(buf)
	}
}

// ReadCase reads the case at row (IndexEntry.Row) of a cases/ or quarantine/ file.
func ReadCase(path string, row int64) (*replaycase.Case, error) {
	f, df, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRow(df, path, row)
}

// readRow reads one case row of an open cases/ or quarantine/ file; path names it in errors.
func readRow(df dataFile, path string, row int64) (*replaycase.Case, error) {
	pf := df.pf
	if row < 0 || row >= pf.NumRows() {
		return nil, fmt.Errorf("%s: row %d out of range (the file has %d rows)", path, row, pf.NumRows())
	}
	r := newRowReader[CaseRow](df)
	defer r.Close()
	err := r.SeekToRow(row)
	rows := make([]CaseRow, 1)
	if err == nil {
		var n int
		if n, err = r.Read(rows); n == 1 {
			err = nil
		} else if err == nil {
			err = io.EOF
		}
	}
	if errors.Is(err, io.EOF) { // the row is in range (checked above)
		err = df.missingRow(row, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading row %d: %w", path, row, err)
	}
	restoreRows(pf, rows)
	return &rows[0], nil
}

// stepColumns are columns of a step that a case row has not (its steps are in the list
// column steps). A steps/ file has them at its root, and a case file's footer and case ids: read
// as cases, its rows would be hollow cases (no status, no steps) under the ids of real ones.
// (A case file of an older build may lack many case columns, so the test is this one.)
var stepColumns = []string{"index", "kind"}

// ReadCases reads every row of a cases/ or quarantine/ file (or of a file `reprise export`
// wrote). A file of steps is refused.
func ReadCases(path string) ([]CaseRow, error) { return readAll[CaseRow](path, notSteps) }

// notSteps refuses a schema with the columns of a step at its root.
func notSteps(path string, schema *parquet.Schema) error {
	if slices.ContainsFunc(schema.Fields(), func(f parquet.Field) bool { return slices.Contains(stepColumns, f.Name()) }) {
		return fmt.Errorf("%s is not a file of case rows: it has the columns of a step (index, kind), as a steps/ file has", path)
	}
	return nil
}

// ReadSteps reads every row of a steps/ file.
func ReadSteps(path string) ([]StepRow, error) { return readAll[StepRow](path, nil) }

// readAll reads every row of the data file at path, once check (if not nil) accepts its schema.
func readAll[T any](path string, check func(path string, schema *parquet.Schema) error) ([]T, error) {
	f, df, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if check != nil {
		if err := check(path, df.pf.Schema()); err != nil {
			return nil, err
		}
	}
	rows, err := readEveryRow[T](df)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

// readEveryRow reads every row of an open data file, indexBatch rows at a time: the rows the
// footer claims are not allocated before they are read (a forged count would claim terabytes).
// Pages that end before the rows the footer claims are an error of the bytes.
func readEveryRow[T any](df dataFile) ([]T, error) {
	r := newRowReader[T](df)
	defer r.Close()
	rows := make([]T, 0, min(r.NumRows(), indexBatch))
	for {
		rows = slices.Grow(rows, indexBatch)
		n, err := r.Read(rows[len(rows) : len(rows)+indexBatch])
		restoreRows(df.pf, rows[len(rows):len(rows)+n])
		rows = rows[:len(rows)+n]
		if errors.Is(err, io.EOF) {
			return rows, df.rowsRead(-1, int64(len(rows)))
		}
		if err != nil {
			return nil, err
		}
	}
}

// open opens a data file and checks its schema version.
func open(path string, opts ...parquet.FileOption) (*os.File, dataFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, dataFile{}, err
	}
	info, err := f.Stat()
	if err == nil {
		var df dataFile
		if df, err = openFile(f, info.Size(), opts...); err == nil {
			return f, df, nil
		}
	}
	f.Close()
	return nil, dataFile{}, fmt.Errorf("%s: %w", path, err)
}

// openFile reads a data file's footer and checks that it names a schema version this build
// reads. An error of the file's bytes wraps ErrUnreadable; a failed read does not. So does a
// panic of parquet-go decoding the footer (see recoverDecode), and a footer that places a
// column chunk's offset index outside the file: parquet-go allocates the length the footer
// claims (up to 2 GiB a column chunk; a negative one panics) before it reads. The offset
// indexes, which the readers seek with, are read after that check, unless opts skip the page
// index (a read then loads those of the chunks it reads). The column indexes, which only
// filter, are not read: one the footer places outside the file is no reason to refuse rows.
// Once the footer is decoded, every read of the file checks the page headers in its bytes
// before parquet-go decodes them: one that claims more than its column chunk holds fails the
// read, an error of the bytes, before parquet-go allocates what it claims (pageHeaders).
func openFile(in io.ReaderAt, size int64, opts ...parquet.FileOption) (_ dataFile, err error) {
	cfg := parquet.DefaultFileConfig()
	cfg.Apply(opts...)
	reads := &readErrors{ReaderAt: in}
	defer func() { err = reads.ofBytes(err) }()
	defer recoverDecode(&err)
	pf, err := parquet.OpenFile(reads, size, append(opts, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))...)
	if err != nil {
		return dataFile{}, err
	}
	if v, _ := pf.Lookup(SchemaVersionKey); v != SchemaVersion {
		return dataFile{}, fmt.Errorf("footer %s is %q; this build reads %q", SchemaVersionKey, v, SchemaVersion)
	}
	if err := rowsAgree(pf); err != nil {
		return dataFile{}, err
	}
	if err := offsetIndexInFile(pf, size); err != nil {
		return dataFile{}, err
	}
	if !cfg.SkipPageIndex {
		if err := readOffsetIndexes(pf, reads); err != nil {
			return dataFile{}, fmt.Errorf("reading page index of parquet file: %w", err)
		}
	}
	reads.headers = newPageHeaders(pf, size, !cfg.SkipPageIndex)
	return dataFile{pf, reads}, nil
}

// rowsAgree checks the footer's row counts against each other: the file's is the sum of its
// row groups', and each column chunk of a row group holds a value (a null included) for each
// of its rows: exactly one for each row when the column is not repeated. A forged count read as
// it claims made parquet-go's readers return rows of the next row group in place of those
// missing, and the readers allocate for the rows claimed.
func rowsAgree(pf *parquet.File) error {
	groups := pf.Metadata().RowGroups
	var rows int64
	for g, rg := range groups {
		if rg.NumRows < 0 {
			return fmt.Errorf("row group %d: %d rows", g, rg.NumRows)
		}
		rows += rg.NumRows
	}
	if rows != pf.NumRows() {
		return fmt.Errorf("the footer claims %d rows; its row groups hold %d", pf.NumRows(), rows)
	}
	// The leaves are walked from the root, not listed with Schema().Columns(), which builds
	// every column's path anew for each file opened (~1,000 allocations for cases/: a merge
	// opens each segment it reads).
	leaves := 0
	if err := eachLeaf(pf.Root(), func(leaf *parquet.Column) error {
		leaves++
		i, repeated := leaf.Index(), leaf.MaxRepetitionLevel() > 0
		for g, rg := range groups {
			if i < 0 || i >= len(rg.Columns) {
				return fmt.Errorf("row group %d: %d column chunks; the schema has more columns", g, len(rg.Columns))
			}
			if n := rg.Columns[i].MetaData.NumValues; n < rg.NumRows || (!repeated && n != rg.NumRows) {
				return fmt.Errorf("row group %d: column %q holds %d values for %d rows", g, strings.Join(leaf.Path(), "."), n, rg.NumRows)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for g, rg := range groups {
		if len(rg.Columns) != leaves {
			return fmt.Errorf("row group %d: %d column chunks; the schema has %d columns", g, len(rg.Columns), leaves)
		}
	}
	return nil
}

// eachLeaf calls fn with each leaf column under c, in the schema's order.
func eachLeaf(c *parquet.Column, fn func(*parquet.Column) error) error {
	if c.Leaf() {
		return fn(c)
	}
	for _, child := range c.Columns() {
		if err := eachLeaf(child, fn); err != nil {
			return err
		}
	}
	return nil
}

// offsetIndexInFile checks that the footer places the offset index of each column chunk
// inside the file.
func offsetIndexInFile(pf *parquet.File, size int64) error {
	for g, rg := range pf.Metadata().RowGroups {
		for c, chunk := range rg.Columns {
			offset, length := chunk.OffsetIndexOffset, int64(chunk.OffsetIndexLength)
			if offset != 0 && (offset < 0 || length < 0 || offset+length > size) {
				return fmt.Errorf("row group %d, column chunk %d: the footer places its offset index at bytes %d to %d of a file of %d bytes",
					g, c, offset, offset+length, size)
			}
		}
	}
	return nil
}

// readOffsetIndexes loads the offset index of every column chunk of pf (placed inside the file:
// offsetIndexInFile) from one read of in, as parquet-go reads the page index when it is not
// skipped: a chunk's own read each would be one ranged GET per column chunk (245 a row group
// of cases/) for a file in a bucket.
func readOffsetIndexes(pf *parquet.File, in io.ReaderAt) error {
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, rg := range pf.Metadata().RowGroups {
		for _, chunk := range rg.Columns {
			if chunk.OffsetIndexOffset != 0 {
				lo, hi = min(lo, chunk.OffsetIndexOffset), max(hi, chunk.OffsetIndexOffset+int64(chunk.OffsetIndexLength))
			}
		}
	}
	if hi <= lo {
		return nil // no offset index
	}
	region := make([]byte, hi-lo)
	if n, err := in.ReadAt(region, lo); n < len(region) {
		return fmt.Errorf("reading the offset indexes at bytes %d to %d: %w", lo, hi, cmp.Or(err, io.ErrUnexpectedEOF))
	}
	from := regionReader{region, lo}
	for _, rg := range pf.RowGroups() {
		for _, chunk := range rg.ColumnChunks() {
			fc, ok := chunk.(*parquet.FileColumnChunk)
			if !ok {
				return fmt.Errorf("a column chunk of type %T, not a file's", chunk)
			}
			if _, err := fc.OffsetIndexFrom(from); err != nil && !errors.Is(err, parquet.ErrMissingOffsetIndex) {
				return err
			}
		}
	}
	return nil
}

// regionReader reads the bytes of a file from offset at on, out of a copy of them in memory.
type regionReader struct {
	b  []byte
	at int64
}

func (r regionReader) ReadAt(p []byte, off int64) (int, error) {
	off -= r.at
	if off < 0 || off > int64(len(r.b)) {
		return 0, fmt.Errorf("bytes at %d are outside the region read (%d bytes from %d)", off+r.at, len(r.b), r.at)
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
