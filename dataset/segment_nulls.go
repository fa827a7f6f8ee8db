package dataset

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Segments written on parquet-go's fast path, their NULLs restored by the merge.
//
// The rows users read are what Schema.Deconstruct makes of the Go rows (WriteRows, for the case
// files of `reprise export`; the merge, for the dataset's files), which stores the zero value of an
// optional field of a non-pointer Go type (an empty string, false, 0, a nil []byte) as NULL.
// GenericWriter.Write is cheaper (a batch staged and merged: about a fifth less CPU and less than
// half the allocations, BenchmarkWriteCases), but parquet-go v0.32 stores some of those zero values
// as present: in writeRowsFuncOfOptional (column_buffer_write.go) the run of non-nulls is tested
// with `b == (1<<y)-1` where all ones (`^uint64(0)>>y`) is meant, so a null after a run of present
// values, across the rows of one call or the elements of one list, is written as a value. Only
// present-for-null goes wrong: a value is never written as NULL.
//
// A segment is read by nobody but the merge, so segments of cases/ and quarantine/ are written
// with Write and marked so in their footer (segmentWriterKey), and the merge puts the NULLs
// back as it reads each page (restoreNulls): in every column of an optional field of a
// non-pointer Go type, a value at the column's maximum definition level that is the zero value
// becomes NULL one definition level lower. The merged file then holds what Deconstruct makes
// of each row. Values Deconstruct stores are never zero values there, so the repair changes
// nothing once parquet-go is fixed, but for one case: an empty non-nil []byte, which
// Deconstruct stores as a present empty value and the repair cannot tell from a nil one; a
// segment file holding one is written through WriteRows without the footer mark (needsExact),
// and files without the mark (those, and segments of earlier builds) are copied as they are.

// segmentWriterKey is the footer key/value entry of segment files written with
// GenericWriter.Write, whose optional zero values the merge must turn back into NULLs.
const segmentWriterKey = "reprise.segment_writer"

// segmentWriterWrite is the value of segmentWriterKey.
const segmentWriterWrite = "generic-write"

// zeroNulls says, for one Go row type and its schema, which columns store a zero value as
// NULL when the row is deconstructed.
type zeroNulls struct {
	goType reflect.Type
	schema *parquet.Schema
	// maxDef is, by leaf column index, the maximum definition level of a column of an optional
	// field of a non-pointer Go type; 0 for the other columns.
	maxDef []int
	// emptyBytes reports whether a row holds an optional []byte that is empty but not nil;
	// nil when the type has no optional []byte.
	emptyBytes emptyBytesFinder
}

// emptyBytesFinder reports whether the value holds an empty, non-nil optional []byte.
type emptyBytesFinder func(reflect.Value) bool

// newZeroNulls walks the schema's nodes and the Go type's fields together. It fails, naming the
// field, on an optional non-pointer field whose zero value it does not know how Write and
// Deconstruct store (a struct group, a time, a map, an array): a segment of such a type could
// not be repaired.
func newZeroNulls(goType reflect.Type, schema *parquet.Schema) (*zeroNulls, error) {
	z := &zeroNulls{goType: goType, schema: schema, maxDef: make([]int, len(schema.Columns()))}
	found, err := z.walk(schema, goType, nil)
	if err != nil {
		return nil, err
	}
	z.emptyBytes = found
	return z, nil
}

// walk records the columns of node, whose rows are Go values of type t, and returns the finder
// of empty non-nil optional []byte among them (nil when there is none).
func (z *zeroNulls) walk(node parquet.Node, t reflect.Type, path []string) (emptyBytesFinder, error) {
	if !node.Optional() {
		return z.walkValue(node, t, path)
	}
	if t.Kind() == reflect.Pointer { // nil is NULL, tested pointer by pointer by Write too
		return z.walkValue(node, t, path)
	}
	name := strings.Join(path, ".")
	if !node.Leaf() {
		return nil, fmt.Errorf("optional group %s has the non-pointer Go type %s: Write stores its zero value as a group, Deconstruct as NULL; make it a pointer", name, t)
	}
	leaf, ok := z.schema.Lookup(path...)
	if !ok {
		return nil, fmt.Errorf("column %s is not in the schema", name)
	}
	var want parquet.Kind
	switch t.Kind() {
	case reflect.String:
		want = parquet.ByteArray
	case reflect.Slice:
		if t.Elem().Kind() != reflect.Uint8 {
			return nil, fmt.Errorf("optional column %s has the Go type %s, a list without the list tag", name, t)
		}
		want = parquet.ByteArray
	case reflect.Bool:
		want = parquet.Boolean
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = leaf.Node.Type().Kind() // INT32 or INT64, by the size and tag
		if want != parquet.Int32 && want != parquet.Int64 {
			return nil, fmt.Errorf("optional column %s of Go type %s is stored as %s", name, t, want)
		}
	case reflect.Float32:
		want = parquet.Float
	case reflect.Float64:
		want = parquet.Double
	default:
		return nil, fmt.Errorf("optional column %s has the non-pointer Go type %s, whose zero value's storage is not known here; make it a pointer", name, t)
	}
	if got := leaf.Node.Type().Kind(); got != want {
		return nil, fmt.Errorf("optional column %s of Go type %s is stored as %s, not %s", name, t, got, want)
	}
	z.maxDef[leaf.ColumnIndex] = leaf.MaxDefinitionLevel
	if t.Kind() == reflect.Slice {
		return func(v reflect.Value) bool { return v.Len() == 0 && !v.IsNil() }, nil
	}
	return nil, nil
}

// walkValue walks a node that holds a value whenever its Go value is set: required, repeated,
// or optional with a pointer type.
func (z *zeroNulls) walkValue(node parquet.Node, t reflect.Type, path []string) (emptyBytesFinder, error) {
	if t.Kind() == reflect.Pointer {
		found, err := z.walkValue(node, t.Elem(), path)
		if found == nil || err != nil {
			return nil, err
		}
		return func(v reflect.Value) bool { return !v.IsNil() && found(v.Elem()) }, nil
	}
	name := strings.Join(path, ".")
	var logical format.LogicalTypeValue
	if lt := node.Type().LogicalType(); lt != nil {
		logical = lt.Value
	}
	_, isList := logical.(*format.ListType)
	_, isMap := logical.(*format.MapType)
	switch {
	case node.Repeated():
		if t.Kind() != reflect.Slice {
			return nil, fmt.Errorf("repeated column %s has the Go type %s", name, t)
		}
		return eachElement(z.walk(parquet.Required(node), t.Elem(), path))
	case isList:
		if t.Kind() != reflect.Slice {
			return nil, fmt.Errorf("list %s has the Go type %s", name, t)
		}
		list := node.Fields()[0]
		element := list.Fields()[0]
		return eachElement(z.walk(element, t.Elem(), append(path, list.Name(), element.Name())))
	case isMap:
		if t.Kind() != reflect.Map {
			return nil, fmt.Errorf("map %s has the Go type %s", name, t)
		}
		keyValue := node.Fields()[0]
		kv := keyValue.Fields()
		inKey, err := z.walk(kv[0], t.Key(), append(path, keyValue.Name(), kv[0].Name()))
		if err != nil {
			return nil, err
		}
		inValue, err := z.walk(kv[1], t.Elem(), append(path, keyValue.Name(), kv[1].Name()))
		if err != nil || inKey == nil && inValue == nil {
			return nil, err
		}
		return func(v reflect.Value) bool {
			for it := v.MapRange(); it.Next(); {
				if inKey != nil && inKey(it.Key()) || inValue != nil && inValue(it.Value()) {
					return true
				}
			}
			return false
		}, nil
	case node.Leaf():
		return nil, nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("group %s has the Go type %s", name, t)
	}
	fields := goFieldsByColumn(t)
	type finderAt struct {
		index []int
		found emptyBytesFinder
	}
	var finders []finderAt
	for _, child := range node.Fields() {
		f, ok := fields[child.Name()]
		if !ok {
			return nil, fmt.Errorf("column %s has no field in Go type %s", strings.Join(append(path, child.Name()), "."), t)
		}
		found, err := z.walk(child, f.Type, append(path, child.Name()))
		if err != nil {
			return nil, err
		}
		if found != nil {
			finders = append(finders, finderAt{f.Index, found})
		}
	}
	if len(finders) == 0 {
		return nil, nil
	}
	return func(v reflect.Value) bool {
		for _, f := range finders {
			if f.found(v.FieldByIndex(f.index)) {
				return true
			}
		}
		return false
	}, nil
}

// eachElement is the finder of a slice whose elements found looks into.
func eachElement(found emptyBytesFinder, err error) (emptyBytesFinder, error) {
	if found == nil || err != nil {
		return nil, err
	}
	return func(v reflect.Value) bool {
		for i := range v.Len() {
			if found(v.Index(i)) {
				return true
			}
		}
		return false
	}, nil
}

// goFieldsByColumn is the fields of a struct type by the column name parquet-go gives them (the
// parquet tag's name, or the field name), with the fields of untagged embedded structs
// flattened into it as parquet-go does.
func goFieldsByColumn(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("parquet") == "" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, seen := out[name]; !seen || len(f.Index) < len(out[name].Index) {
			out[name] = f
		}
	}
	return out
}

// needsExact reports whether rows hold a value that a segment written with Write and repaired
// would not store as Deconstruct does: an empty, non-nil optional []byte.
func (z *zeroNulls) needsExact(rows reflect.Value) bool {
	if z.emptyBytes == nil {
		return false
	}
	for i := range rows.Len() {
		if z.emptyBytes(rows.Index(i)) {
			return true
		}
	}
	return false
}

// restoreNulls turns, in a page's values of column column, the zero values at the column's
// maximum definition level into NULLs, as Deconstruct stores them.
func (z *zeroNulls) restoreNulls(values []parquet.Value, column int) {
	maxDef := z.maxDef[column]
	if maxDef == 0 {
		return
	}
	for i, v := range values {
		if v.DefinitionLevel() == maxDef && isZeroValue(v) {
			values[i] = parquet.NullValue().Level(v.RepetitionLevel(), maxDef-1, column)
		}
	}
}

// isZeroValue reports whether a present value is the Go zero value Deconstruct stores as NULL
// (reflect.Value.IsZero: "" and a nil []byte, false, 0, and a float's +0 but not -0).
func isZeroValue(v parquet.Value) bool {
	switch v.Kind() {
	case parquet.ByteArray:
		return len(v.ByteArray()) == 0
	case parquet.Boolean:
		return !v.Boolean()
	case parquet.Int32:
		return v.Int32() == 0
	case parquet.Int64:
		return v.Int64() == 0
	case parquet.Float:
		return math.Float32bits(v.Float()) == 0
	case parquet.Double:
		return math.Float64bits(v.Double()) == 0
	}
	return false
}

// writesWithWrite reports whether a staged file of rows is written with Write, its footer
// marked for the merge's repair: a segment (z not nil) of z's row type that holds no empty
// non-nil optional []byte. The other staged files go through WriteRows.
func writesWithWrite[T any](z *zeroNulls, rows []T) bool {
	return z != nil && z.goType == reflect.TypeFor[T]() && !z.needsExact(reflect.ValueOf(rows))
}

// writeStagedRows writes the rows of a staged file, with Write and the footer mark when
// withWrite (writesWithWrite), else with WriteRows.
func writeStagedRows[T any](pw *parquet.GenericWriter[T], rows []T, withWrite bool) error {
	if !withWrite {
		return WriteRows(pw, rows)
	}
	pw.SetKeyValueMetadata(segmentWriterKey, segmentWriterWrite)
	_, err := pw.Write(rows)
	return err
}

// writtenWithWrite reports whether a segment file was written with Write (writeStagedRows).
func writtenWithWrite(pf *parquet.File) bool {
	v, _ := pf.Lookup(segmentWriterKey)
	return v == segmentWriterWrite
}
