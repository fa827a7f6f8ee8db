package dataset

import (
	"errors"
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// steps/ written once, by the merge, from the cases/ segments.
//
// A steps/ row is one step of an accepted case, with the case's id and schema version, and
// without the trace id and the span ids: random ids, which no compressor shrinks and which
// cases/ already holds (provenance.trace_id, and in steps[]: span_id, parent_span_id;
// tool_call.span_id, retrieval.span_id and the tool call's requested_by follow from them,
// ids_stored_once.go). Stored in both they cost more than everything else in steps/. The
// columns stay, NULL, so that notebooks reading old and new files together need no schema
// option. A steps/ row then holds nothing the cases/ row does not hold. So every batch is
// staged as a segment of cases/ and quarantine/ rows only (Writer.Write), and the merge writes
// steps/ from the columns of the cases/ segment: each steps/ column of the step is the cases/
// column under steps.list.element, with the list's repetition and definition levels taken off
// (a value that starts a step starts a row); case_id and schema_version are the case's, once
// per step; trace_id and the span ids are NULL. steps/ is then shredded and encoded once
// instead of twice (for the segment, then again by the merge). Segments staged by an earlier
// build hold their own steps/ files; the merge copies those as they are and derives nothing
// from their cases/ (segments.go).

// stepsPrefix is the path in cases/ of the group that holds one step.
var stepsPrefix = []string{"steps", "list", "element"}

// stepIDColumns are the steps/ columns left NULL: the span ids, which cases/ holds.
var stepIDColumns = [][]string{
	{"span_id"}, {"parent_span_id"},
	{"tool_call", "span_id"}, {"tool_call", "requested_by"},
	{"retrieval", "span_id"},
}

// stepColumn says where the values of one steps/ column come from.
type stepColumn struct {
	source int    // the cases/ column under stepsPrefix; -1 for the columns below
	of     string // "case_id" or "schema_version": the case's value; "trace_id": NULL
	maxDef int    // of the steps/ column
	nulled bool   // a span id: NULL wherever the step has it
}

// stepsOfCases maps the columns of cases/ onto those of steps/.
type stepsOfCases struct {
	caseSchema *parquet.Schema
	columns    []stepColumn // by steps/ column index
	// repDrop and defDrop are the levels of the steps list: a value of a step column at
	// definition level defDrop or more belongs to a step, and one at repetition level repDrop
	// or less starts one.
	repDrop, defDrop      int
	caseID, schemaVersion int // columns of cases/
	caseIDTo, versionTo   int // the same in steps/
	counted               int // a step column of cases/ to count the steps of each case by
}

func newStepsOfCases(caseSchema, stepSchema *parquet.Schema) (*stepsOfCases, error) {
	d := &stepsOfCases{caseSchema: caseSchema, counted: -1, caseIDTo: -1, versionTo: -1}
	leaf := func(s *parquet.Schema, path []string) (parquet.LeafColumn, error) {
		l, ok := s.Lookup(path...)
		if !ok {
			return l, fmt.Errorf("steps/ column %v has no cases/ column", path)
		}
		return l, nil
	}
	for _, name := range []string{"case_id", "schema_version"} {
		l, err := leaf(caseSchema, []string{name})
		if err != nil {
			return nil, err
		}
		if l.MaxRepetitionLevel != 0 || l.MaxDefinitionLevel != 0 {
			return nil, fmt.Errorf("cases/ column %s is not required", name)
		}
		if name == "case_id" {
			d.caseID = l.ColumnIndex
		} else {
			d.schemaVersion = l.ColumnIndex
		}
	}
	for _, path := range stepSchema.Columns() {
		dst, _ := stepSchema.Lookup(path...)
		c := stepColumn{source: -1, maxDef: dst.MaxDefinitionLevel}
		switch {
		case len(path) == 1 && (path[0] == "case_id" || path[0] == "schema_version" || path[0] == "trace_id"):
			c.of = path[0]
			switch c.of {
			case "case_id":
				d.caseIDTo = len(d.columns)
			case "schema_version":
				d.versionTo = len(d.columns)
			}
		default:
			src, err := leaf(caseSchema, append(slices.Clip(stepsPrefix), path...))
			if err != nil {
				return nil, err
			}
			rep, def := src.MaxRepetitionLevel-dst.MaxRepetitionLevel, src.MaxDefinitionLevel-dst.MaxDefinitionLevel
			if d.counted < 0 {
				d.counted, d.repDrop, d.defDrop = src.ColumnIndex, rep, def
			}
			if rep != d.repDrop || def != d.defDrop {
				return nil, fmt.Errorf("steps/ column %v is not the cases/ one under %v", path, stepsPrefix)
			}
			c.source = src.ColumnIndex
			c.nulled = slices.ContainsFunc(stepIDColumns, func(id []string) bool { return slices.Equal(id, path) })
			if c.nulled && c.maxDef == 0 {
				return nil, fmt.Errorf("steps/ column %v is required: it cannot be NULL", path)
			}
		}
		d.columns = append(d.columns, c)
	}
	if d.counted < 0 {
		return nil, errors.New("steps/ has no column of the step")
	}
	if d.caseIDTo < 0 || d.versionTo < 0 {
		return nil, errors.New("steps/ needs both case_id and schema_version")
	}
	nulled := 0
	for _, c := range d.columns {
		if c.nulled {
			nulled++
		}
	}
	if nulled != len(stepIDColumns) {
		return nil, fmt.Errorf("steps/ has %d of the %d span id columns %v", nulled, len(stepIDColumns), stepIDColumns)
	}
	return d, nil
}

// stepRowsOf is, for each steps/ row that the cases of a row group of cases/ make, its
// case_id and schema_version values, at the steps/ column indexes.
type stepRowsOf struct {
	caseIDs, versions []parquet.Value
}

// stepRows reads the case ids and schema versions of the row group's cases, and how many
// steps each has.
func (m *columnMerge) stepRows(d *stepsOfCases, numRows int64, chunks []parquet.ColumnChunk) (stepRowsOf, error) {
	stepsOf := make([]int, 0, numRows) // steps of each case, in row order
	err := m.eachPage(chunks[d.counted], func(values []parquet.Value) (bool, error) {
		for _, v := range values {
			if v.RepetitionLevel() == 0 {
				stepsOf = append(stepsOf, 0)
			}
			if len(stepsOf) > 0 && v.DefinitionLevel() >= d.defDrop && v.RepetitionLevel() <= d.repDrop {
				stepsOf[len(stepsOf)-1]++
			}
		}
		return true, nil
	})
	if err == nil && int64(len(stepsOf)) != numRows {
		err = fmt.Errorf("column %d holds %d cases, the row group %d", d.counted, len(stepsOf), numRows)
	}
	if err != nil {
		return stepRowsOf{}, err
	}
	var rows stepRowsOf
	if rows.caseIDs, err = m.perStep(chunks[d.caseID], stepsOf, d.columns[d.caseIDTo].maxDef, d.caseIDTo); err != nil {
		return stepRowsOf{}, fmt.Errorf("case_id: %w", err)
	}
	if rows.versions, err = m.perStep(chunks[d.schemaVersion], stepsOf, d.columns[d.versionTo].maxDef, d.versionTo); err != nil {
		return stepRowsOf{}, fmt.Errorf("schema_version: %w", err)
	}
	return rows, nil
}

// perStep is the values of a required cases/ column (one a case) as steps/ column column of
// maximum definition level maxDef: each case's value once for each of its steps (stepsOf).
func (m *columnMerge) perStep(chunk parquet.ColumnChunk, stepsOf []int, maxDef, column int) ([]parquet.Value, error) {
	var out []parquet.Value
	row := 0
	err := m.eachPage(chunk, func(values []parquet.Value) (bool, error) {
		for _, v := range values {
			if row < len(stepsOf) && stepsOf[row] > 0 {
				v = caseValue(v.Clone(), maxDef, column)
				for range stepsOf[row] {
					out = append(out, v)
				}
			}
			row++
		}
		return true, nil
	})
	if err == nil && row != len(stepsOf) {
		err = fmt.Errorf("the column holds %d cases, the steps %d", row, len(stepsOf))
	}
	return out, err
}

// caseValue is a case's value in a steps/ column of maximum definition level maxDef: in an
// optional column, an empty value is NULL, as the writer stores an empty string of a row.
func caseValue(v parquet.Value, maxDef, column int) parquet.Value {
	if maxDef > 0 && len(v.ByteArray()) == 0 {
		return parquet.NullValue().Level(0, 0, column)
	}
	return v.Level(0, maxDef, column)
}

// writeStepsOf writes the steps of the cases in rg, a row group of a cases/ segment, as
// steps/ rows.
func (m *columnMerge) writeStepsOf(rg parquet.RowGroup, d *stepsOfCases) error {
	if !parquet.EqualNodes(rg.Schema(), d.caseSchema) {
		return errors.New("segment schema differs from the cases/ schema")
	}
	chunks := rg.ColumnChunks()
	rows, err := m.stepRows(d, rg.NumRows(), chunks)
	if err != nil {
		return err
	}
	return m.writeRows(int64(len(rows.caseIDs)), func(i int, dst *parquet.ColumnWriter, lo, hi int64, whole bool) error {
		c := d.columns[i]
		var values []parquet.Value
		switch c.of {
		case "":
			return m.copyColumn(dst, chunks[c.source], func(values []parquet.Value) []parquet.Value {
				return m.stepValues(d, c, i, values)
			}, lo, hi, whole)
		case "case_id":
			values = rows.caseIDs[lo:hi]
		case "schema_version":
			values = rows.versions[lo:hi]
		default: // trace_id
			values = slices.Grow(m.derived[:0], int(hi-lo))
			for range hi - lo {
				values = append(values, parquet.NullValue().Level(0, 0, i))
			}
			m.derived = values
		}
		_, err := dst.WriteRowValues(values)
		return err
	})
}

// stepValues is values, a page of a cases/ column under stepsPrefix, as the values of steps/
// column i: without the cases that have no step, one level of repetition and the list's
// definition levels less, and NULL in place of a span id.
func (m *columnMerge) stepValues(d *stepsOfCases, c stepColumn, i int, values []parquet.Value) []parquet.Value {
	out := m.derived[:0]
	for _, v := range values {
		def := v.DefinitionLevel() - d.defDrop
		if def < 0 { // a case without steps
			continue
		}
		rep := max(v.RepetitionLevel()-d.repDrop, 0)
		if c.nulled && def == c.maxDef {
			v, def = parquet.NullValue(), c.maxDef-1
		}
		out = append(out, v.Level(rep, def, i))
	}
	m.derived = out
	return out
}
