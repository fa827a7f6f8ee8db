package dataset

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/parquet-go/parquet-go"
)

// rowPages reads single rows of an open file page by page: for each column chunk of the row's
// row group it loads the chunk's offset index, seeks to the page that holds the row, and
// takes the row's values. It does not use parquet-go's row readers: those convert the schema
// again on each reader, read whole pages into pooled buffers they keep, and carry a finalizer,
// so what a read leaves behind survives one more garbage collection and raises the heap goal
// of a server that reads cases of many files. The values are copied into buffers the next
// read reuses; Reconstruct copies the strings it sets. T is the row type (CaseRow, or a
// projection of it such as CaseSummary): only the columns it has are read. Not safe for
// concurrent use.
type rowPages[T any] struct {
	pf    *parquet.File
	reads *readErrors // pf's reader: offset indexes are loaded through it
	// target is T's schema; conv converts a row of the file's schema to it, nil when the two
	// are the same.
	target *parquet.Schema
	conv   parquet.Conversion
	// skip marks the file's columns a read leaves out (those T does not have, and those
	// leftOut names): they get one null each, as a row without them.
	skip []bool
	// firstRows is the first row of each row group.
	firstRows []int64

	row    parquet.Row     // the row being read, in the file's column order
	vals   []parquet.Value // values read from a page
	bytes  []byte          // the bytes of the row's byte array values
	cursor columnCursor    // reads a column chunk's pages for readRows
}

// rowPagesBatch is how many values a read takes from a page at a time: it stops at the end of
// its row, so a row in the middle of a page does not decode the rest of the page's values.
const rowPagesBatch = 64

// leftOutOfCases are the top-level columns reads of a case leave out: a server of cases does
// not serve them.
var leftOutOfCases = map[string]bool{"raw_spans": true, "raw_events": true}

// newRowPages reads rows of df as T, without the top-level columns leftOut names.
func newRowPages[T any](df dataFile, leftOut map[string]bool) (*rowPages[T], error) {
	pf := df.pf
	r := &rowPages[T]{pf: pf, reads: df.reads, target: parquet.SchemaOf(*new(T)), vals: make([]parquet.Value, rowPagesBatch)}
	columns := pf.Schema().Columns()
	read := make([]bool, len(columns)) // the columns T has
	if parquet.EqualNodes(r.target, pf.Schema()) {
		for i := range read {
			read[i] = true
		}
	} else {
		conv, err := parquet.Convert(r.target, pf.Schema())
		if err != nil {
			return nil, err
		}
		r.conv = conv
		for i := range r.target.Columns() {
			if src := conv.Column(i); src >= 0 && src < len(read) {
				read[src] = true
			}
		}
	}
	for i, path := range columns {
		r.skip = append(r.skip, !read[i] || leftOut[path[0]])
	}
	var first int64
	for _, rg := range pf.RowGroups() {
		r.firstRows = append(r.firstRows, first)
		first += rg.NumRows()
	}
	return r, nil
}

// read reads the row at index row of the file into dst, which it overwrites.
func (r *rowPages[T]) read(row int64, dst *T) error {
	g := sort.Search(len(r.firstRows), func(i int) bool { return r.firstRows[i] > row }) - 1
	if g < 0 {
		return fmt.Errorf("row %d out of range", row)
	}
	chunks := r.pf.RowGroups()[g].ColumnChunks()
	if len(chunks) != len(r.skip) {
		return fmt.Errorf("row group %d has %d columns, the schema %d", g, len(chunks), len(r.skip))
	}
	r.row, r.bytes = r.row[:0], r.bytes[:0]
	for col, chunk := range chunks {
		if r.skip[col] {
			r.row = append(r.row, skippedValue(col))
			continue
		}
		if err := r.readChunk(chunk, row-r.firstRows[g]); err != nil {
			return fmt.Errorf("column %q: %w", r.pf.Schema().Columns()[col], err)
		}
	}
	var zero T
	*dst = zero
	return r.reconstruct(dst)
}

// skippedValue is the value of a column a read leaves out: one null, as a row without it.
func skippedValue(col int) parquet.Value { return parquet.Value{}.Level(0, 0, col) }

// reconstruct converts r.row, a row of the file's schema, to T's and sets dst from it.
func (r *rowPages[T]) reconstruct(dst *T) error {
	if r.conv != nil {
		rows := []parquet.Row{r.row}
		if _, err := r.conv.Convert(rows); err != nil {
			return err
		}
		r.row = rows[0]
	}
	err := r.target.Reconstruct(dst, r.row)
	clear(r.row) // the values point into r.bytes: drop them so a closed file holds nothing
	zeroTimesBackOf(dst)
	return err
}

// readChunk appends the values of one row of a column chunk (row counted from the row
// group's first) to r.row.
func (r *rowPages[T]) readChunk(chunk parquet.ColumnChunk, row int64) error {
	if fc, ok := chunk.(*parquet.FileColumnChunk); ok {
		// Loading the offset index lets the seek go straight to the row's page; a file
		// written without one is read from the chunk's first page.
		if _, err := r.reads.offsetIndex(fc); err != nil && !errors.Is(err, parquet.ErrMissingOffsetIndex) {
			return err
		}
	}
	pages := chunk.Pages()
	defer pages.Close()
	if err := pages.SeekToRow(row); err != nil {
		return err
	}
	started := false // the row's first value (repetition level 0) was taken
	for {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		done, err := r.takeRow(page, &started)
		parquet.Release(page)
		if err != nil || done {
			return err
		}
	}
	if !started {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// takeRow appends the values of page up to the start of the next row; done once it has seen
// that start (the page seeked to begins with the row).
func (r *rowPages[T]) takeRow(page parquet.Page, started *bool) (done bool, err error) {
	values := page.Values()
	for {
		n, err := values.ReadValues(r.vals)
		for _, v := range r.vals[:n] {
			if v.RepetitionLevel() == 0 {
				if *started {
					return true, nil
				}
				*started = true
			}
			r.row = append(r.row, r.own(v))
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// own is v with its bytes copied into r.bytes: the page they point into is released.
func (r *rowPages[T]) own(v parquet.Value) parquet.Value {
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		if v.IsNull() {
			return v
		}
		from := len(r.bytes)
		r.bytes = append(r.bytes, v.ByteArray()...)
		b := r.bytes[from:len(r.bytes):len(r.bytes)]
		if v.Kind() == parquet.ByteArray {
			return parquet.ByteArrayValue(b).Level(v.RepetitionLevel(), v.DefinitionLevel(), v.Column())
		}
		return parquet.FixedLenByteArrayValue(b).Level(v.RepetitionLevel(), v.DefinitionLevel(), v.Column())
	}
	return v
}

// readRows reads several rows of the file (in any order, repeated or not), by row. Each
// column chunk's pages are read once for all the rows it holds: a listing page reads many
// rows of a few columns, and reading each row on its own decompresses a page per row. A page
// is decoded, its values for the rows asked copied, and released before the next; a chunk
// seeks past the pages that hold none of the rows asked when its offset index says where
// they are. The values of the columns read are kept side by side, and each row is put
// together in one reused row when it is converted: a row of the file's schema has a value
// for each of its columns, a few hundred, most of them nulls for the columns left out.
func (r *rowPages[T]) readRows(rows []int64) (map[int64]*T, error) {
	rows = slices.Compact(slices.Sorted(slices.Values(rows)))
	if len(rows) > 0 && (rows[0] < 0 || rows[len(rows)-1] >= r.pf.NumRows()) {
		bad := rows[0]
		if bad >= 0 {
			bad = rows[len(rows)-1]
		}
		return nil, fmt.Errorf("row %d out of range (the file has %d rows)", bad, r.pf.NumRows())
	}
	var read []int // the columns read, by number in the file
	for col, skip := range r.skip {
		if !skip {
			read = append(read, col)
		}
	}
	// spans[j*len(rows)+k] is where the values of column read[j] for rows[k] are in taken.
	spans := make([][2]int, len(read)*len(rows))
	var taken []parquet.Value
	defer func() { r.bytes = r.bytes[:0] }() // taken's values point into it
	for g, rg := range r.pf.RowGroups() {
		first := r.firstRows[g]
		lo, _ := slices.BinarySearch(rows, first)
		hi, _ := slices.BinarySearch(rows, first+rg.NumRows())
		if lo == hi {
			continue
		}
		chunks := rg.ColumnChunks()
		if len(chunks) != len(r.skip) {
			return nil, fmt.Errorf("row group %d has %d columns, the schema %d", g, len(chunks), len(r.skip))
		}
		for j, col := range read {
			var err error
			at := spans[j*len(rows):][lo:hi]
			if taken, err = r.readChunkRows(chunks[col], rows[lo:hi], first, taken, at); err != nil {
				return nil, fmt.Errorf("column %q: %w", r.pf.Schema().Columns()[col], err)
			}
		}
	}
	out := make(map[int64]*T, len(rows))
	for k, row := range rows {
		r.row = r.row[:0]
		j := 0
		for col, skip := range r.skip {
			if skip {
				r.row = append(r.row, skippedValue(col))
				continue
			}
			sp := spans[j*len(rows)+k]
			r.row = append(r.row, taken[sp[0]:sp[1]]...)
			j++
		}
		dst := new(T)
		if err := r.reconstruct(dst); err != nil {
			return nil, fmt.Errorf("row %d: %w", row, err)
		}
		out[row] = dst
	}
	return out, nil
}

// readChunkRows appends the values of rows (sorted, distinct, of the file; the row group's
// first is first) in one column chunk to taken, and where each row's are to at.
func (r *rowPages[T]) readChunkRows(chunk parquet.ColumnChunk, rows []int64, first int64, taken []parquet.Value, at [][2]int) ([]parquet.Value, error) {
	var index parquet.OffsetIndex // where pages start; nil: the chunk is read forward
	if fc, ok := chunk.(*parquet.FileColumnChunk); ok {
		idx, err := r.reads.offsetIndex(fc)
		if err != nil && !errors.Is(err, parquet.ErrMissingOffsetIndex) {
			return taken, err
		}
		if err == nil {
			index = idx
		}
	}
	pageOf := func(row int64) int { // the page the row starts in
		if index == nil {
			return 0
		}
		return sort.Search(index.NumPages(), func(i int) bool { return index.FirstRowIndex(i) > row }) - 1
	}
	c := &r.cursor
	c.reset(chunk.Pages(), 0)
	defer c.close()
	pos, seeked := int64(-1), 0 // the row the cursor's next value starts; the page it seeked to
	for k, row := range rows {
		row -= first
		// Read forward when the row is in the page being read or the next one; else seek.
		if pos < 0 || row < pos || (index != nil && pageOf(row) > seeked+c.read) {
			if err := c.seek(row); err != nil {
				return taken, err
			}
			pos, seeked = row, pageOf(row)
		}
		for ; pos <= row; pos++ {
			v, err := c.next()
			if err != nil {
				return taken, err
			}
			if v.RepetitionLevel() != 0 {
				return taken, fmt.Errorf("row %d: a value continues a row where one should start", pos)
			}
			take := pos == row
			if take {
				at[k][0] = len(taken)
			}
			for {
				if take {
					taken = append(taken, r.own(v))
				}
				more, err := c.fill()
				if err != nil {
					return taken, err
				}
				if !more || c.vals[c.i].RepetitionLevel() == 0 {
					break
				}
				if v, err = c.next(); err != nil {
					return taken, err
				}
			}
			if take {
				at[k][1] = len(taken)
			}
		}
	}
	return taken, nil
}
