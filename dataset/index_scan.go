package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// ReplayIndexRow is what a replay server keeps in memory of a case row: what finds the case
// and its recorded model calls, and what listings filter on. It is a view into the scanner's
// buffers, valid during the callback only: the callback copies what it keeps.
type ReplayIndexRow struct {
	CaseID    []byte
	Status    []byte
	StartTime int64  // Unix nanoseconds
	AgentName []byte // empty when the case has none
	Steps     []ReplayIndexStep
}

// ReplayIndexStep is one step of a ReplayIndexRow. CallSiteID is empty in files written
// before call-site ids existed.
type ReplayIndexStep struct {
	Index          int64
	Kind           []byte
	CallSiteID     []byte
	CallSiteFields [][]byte
}

// ScanReplayIndex calls fn with each row's ReplayIndexRow, in file order. It reads the eight
// columns it needs value by value, page by page, instead of decoding rows: a row reader of a
// projection still produces a null for each of the other columns of every row, which made
// most of the memory allocated while indexing a file. An error from fn stops the scan and is
// returned.
func ScanReplayIndex(path string, fn func(row int64, r *ReplayIndexRow) error) error {
	f, df, err := open(path, parquet.SkipPageIndex(true))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := scanReplayIndex(df, fn); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ScanReplayIndex scans a listed file (see ScanReplayIndex).
func (l *ObjectLister) ScanReplayIndex(ctx context.Context, path string, fn func(row int64, r *ReplayIndexRow) error) error {
	df, err := l.open(ctx, path)
	if err != nil {
		return err
	}
	if err := scanReplayIndex(df, fn); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// indexColumns are the leaf columns ScanReplayIndex reads.
type indexColumns struct {
	caseID, status, start, agent, stepIndex, kind, callSiteID, fields parquet.LeafColumn
	startUnit                                                         int64 // nanoseconds per stored unit
}

func lookupIndexColumns(schema *parquet.Schema) (*indexColumns, error) {
	var c indexColumns
	for _, col := range []struct {
		dst  *parquet.LeafColumn
		path []string
	}{
		{&c.caseID, []string{"case_id"}},
		{&c.status, []string{"status"}},
		{&c.start, []string{"start_time"}},
		{&c.agent, []string{"agent_name"}},
		{&c.stepIndex, []string{"steps", "list", "element", "index"}},
		{&c.kind, []string{"steps", "list", "element", "kind"}},
		{&c.callSiteID, []string{"steps", "list", "element", "call_site_id"}},
		{&c.fields, []string{"steps", "list", "element", "call_site_fields", "list", "element"}},
	} {
		leaf, ok := schema.Lookup(col.path...)
		if !ok {
			return nil, fmt.Errorf("no column %v", col.path)
		}
		*col.dst = leaf
	}
	c.startUnit = 1000 // microseconds, as the schema writes them
	if lt := c.start.Node.Type().LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok {
			switch ts.Unit.Value.(type) {
			case *format.MilliSeconds:
				c.startUnit = 1e6
			case *format.NanoSeconds:
				c.startUnit = 1
			}
		}
	}
	return &c, nil
}

// scanReplayIndex scans df. Its errors of decoding the file (a column missing, a corrupt page)
// wrap ErrUnreadable, as rowReader's do; fn's are returned as they are.
func scanReplayIndex(df dataFile, fn func(row int64, r *ReplayIndexRow) error) error {
	cols, err := lookupIndexColumns(df.pf.Schema())
	if err != nil {
		return df.reads.ofBytes(err)
	}
	var s indexScanner
	var row int64
	for _, rg := range df.pf.RowGroups() {
		if err := s.open(rg.ColumnChunks(), cols); err != nil {
			return df.reads.ofBytes(err)
		}
		for range rg.NumRows() {
			r, err := s.next(cols)
			if err != nil {
				err = df.reads.ofBytes(err)
			} else {
				err = fn(row, r)
			}
			if err != nil {
				s.close()
				return fmt.Errorf("row %d: %w", row, err)
			}
			row++
		}
		s.close()
	}
	return nil
}

// indexScanner reads one row group's index columns row by row; every value it returns is
// copied into its own buffers, which the next row reuses.
type indexScanner struct {
	caseID, status, start, agent, stepIndex, kind, callSiteID, fields columnCursor

	row    ReplayIndexRow
	buf    []byte   // the row's bytes
	spans  [][2]int // where each byte field of the row is in buf, in reading order
	fieldN []int    // per step, how many call-site fields it has
}

func (s *indexScanner) open(chunks []parquet.ColumnChunk, c *indexColumns) (err error) {
	defer recoverDecode(&err)
	for _, x := range []struct {
		cur  *columnCursor
		leaf parquet.LeafColumn
	}{{&s.caseID, c.caseID}, {&s.status, c.status}, {&s.start, c.start}, {&s.agent, c.agent}, {&s.stepIndex, c.stepIndex}, {&s.kind, c.kind}, {&s.callSiteID, c.callSiteID}, {&s.fields, c.fields}} {
		if x.leaf.ColumnIndex >= len(chunks) {
			return fmt.Errorf("row group has no column %v", x.leaf.Path)
		}
		x.cur.reset(chunks[x.leaf.ColumnIndex].Pages(), x.leaf.MaxDefinitionLevel)
	}
	return nil
}

func (s *indexScanner) close() {
	for _, c := range []*columnCursor{&s.caseID, &s.status, &s.start, &s.agent, &s.stepIndex, &s.kind, &s.callSiteID, &s.fields} {
		c.close()
	}
}

// copyBytes appends v's bytes to the row buffer and returns their span.
func (s *indexScanner) copyBytes(v parquet.Value) [2]int {
	from := len(s.buf)
	if !v.IsNull() {
		s.buf = append(s.buf, v.ByteArray()...)
	}
	return [2]int{from, len(s.buf)}
}

// next reads the next row.
func (s *indexScanner) next(c *indexColumns) (_ *ReplayIndexRow, err error) {
	defer recoverDecode(&err)
	s.buf, s.spans, s.fieldN = s.buf[:0], s.spans[:0], s.fieldN[:0]
	r := &s.row
	r.Steps = r.Steps[:0]
	// Each value's bytes are copied before the next read, which may release its page.
	for _, cur := range [...]*columnCursor{&s.caseID, &s.status, &s.agent} {
		v, err := cur.next()
		if err != nil {
			return nil, err
		}
		s.spans = append(s.spans, s.copyBytes(v))
	}
	start, err := s.start.next()
	if err != nil {
		return nil, err
	}
	r.StartTime = 0
	if !start.IsNull() {
		r.StartTime = max(min(start.Int64(), math.MaxInt64/c.startUnit), math.MinInt64/c.startUnit) * c.startUnit
	}
	// The step columns hold one value per step, or one null for a case without steps; a value
	// with repetition level 0 starts a row. The call-site fields hold one value per field, or
	// one null for a step without fields.
	for first := true; ; first = false {
		if !first {
			if rep, ok := s.kind.peekRepetition(); !ok || rep == 0 {
				break
			}
		}
		kind, err := s.kind.next()
		if err != nil {
			return nil, err
		}
		present := kind.DefinitionLevel() == s.kind.maxDef
		if present {
			s.spans = append(s.spans, s.copyBytes(kind))
		}
		idx, err := s.stepIndex.next()
		if err != nil {
			return nil, err
		}
		cs, err := s.callSiteID.next()
		if err != nil {
			return nil, err
		}
		if present {
			s.spans = append(s.spans, s.copyBytes(cs))
		}
		n := 0
		for f := true; ; f = false {
			if !f {
				if rep, ok := s.fields.peekRepetition(); !ok || rep < c.fields.MaxRepetitionLevel {
					break
				}
			}
			v, err := s.fields.next()
			if err != nil {
				return nil, err
			}
			if v.DefinitionLevel() == s.fields.maxDef {
				s.spans = append(s.spans, s.copyBytes(v))
				n++
			}
		}
		if !present {
			break // no steps: one null in each step column
		}
		s.fieldN = append(s.fieldN, n)
		r.Steps = slices.Grow(r.Steps, 1)[:len(r.Steps)+1] // keeps the step's field slice for reuse
		r.Steps[len(r.Steps)-1].Index = idx.Int64()
	}
	// Point the row into the buffer, now that it no longer grows.
	next := 0
	r.CaseID, r.Status, r.AgentName = s.span(&next), s.span(&next), s.span(&next)
	for i := range r.Steps {
		st := &r.Steps[i]
		st.Kind, st.CallSiteID = s.span(&next), s.span(&next)
		st.CallSiteFields = st.CallSiteFields[:0]
		for range s.fieldN[i] {
			st.CallSiteFields = append(st.CallSiteFields, s.span(&next))
		}
	}
	return r, nil
}

// span returns the bytes of the next-th span and advances next.
func (s *indexScanner) span(next *int) []byte {
	sp := s.spans[*next]
	*next++
	return s.buf[sp[0]:sp[1]:sp[1]]
}

// columnCursor reads one column chunk value by value. A value's bytes are valid until the
// next call (its page is released when the cursor moves past it).
type columnCursor struct {
	pages  parquet.Pages
	page   parquet.Page
	vals   []parquet.Value
	i      int
	maxDef int
	read   int // pages read since the last reset or seek
}

func (c *columnCursor) reset(pages parquet.Pages, maxDef int) {
	*c = columnCursor{pages: pages, vals: c.vals[:0], maxDef: maxDef}
}

// seek moves the cursor to the start of row (counted from the row group's first).
func (c *columnCursor) seek(row int64) error {
	c.release()
	c.vals, c.i, c.read = c.vals[:0], 0, 0
	return c.pages.SeekToRow(row)
}

func (c *columnCursor) close() {
	c.release()
	if c.pages != nil {
		_ = c.pages.Close()
		c.pages = nil
	}
}

func (c *columnCursor) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
}

// fill makes sure a value is buffered; false at the end of the chunk.
func (c *columnCursor) fill() (bool, error) {
	for c.i >= len(c.vals) {
		c.release()
		p, err := c.pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		c.page = p
		c.read++
		if n := int(p.NumValues()); cap(c.vals) < n {
			c.vals = make([]parquet.Value, n)
		}
		c.vals = c.vals[:p.NumValues()]
		n, err := p.Values().ReadValues(c.vals)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		c.vals, c.i = c.vals[:n], 0
	}
	return true, nil
}

func (c *columnCursor) next() (parquet.Value, error) {
	ok, err := c.fill()
	if err != nil {
		return parquet.Value{}, err
	}
	if !ok {
		return parquet.Value{}, errors.New("column ends before its row group")
	}
	c.i++
	return c.vals[c.i-1], nil
}

// peekRepetition is the repetition level of the next value; false at the end of the chunk.
func (c *columnCursor) peekRepetition() (int, bool) {
	ok, err := c.fill()
	if err != nil || !ok {
		return 0, false // next reports the error
	}
	return c.vals[c.i].RepetitionLevel(), true
}
