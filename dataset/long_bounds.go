package dataset

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// Statistics of long values.
//
// parquet-go writes the min and max of a statistics column (statsColumns) untruncated into every
// page header, twice (the deprecated and the current fields), and into the footer for every row
// group. A client controls some of those columns (agent_name, conversation_id, service_name,
// request_model, response_id, …): one 5 MiB agent name made a page header of 20 MiB, which Arrow
// (pyarrow, pandas) refuses ("Couldn't deserialize thrift … Deserializing page header failed"),
// and with it every other case of the file; and a footer of 40 MiB, which every reader decodes
// on open. Arrow C++ and parquet-mr leave out statistics larger than 4 KiB (their
// max_statistics_size): so does this package, for a whole column of a file, since parquet-go
// cannot leave out one page's. A file whose rows hold a longer value in a statistics column is
// written without that column's statistics.

// maxBoundBytes is the longest value a statistics column keeps its statistics with.
const maxBoundBytes = 4096

// longBoundsOf lists, sorted, the leaf names of the statistics columns in which some string of
// rows is longer than maxBoundBytes.
func longBoundsOf[T any](rows []T) []string {
	found := map[string]bool{}
	for i := range rows {
		findLongBounds(reflect.ValueOf(&rows[i]).Elem(), found)
	}
	names := make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// boundField is a field of a struct that is, or may hold, a statistics column.
type boundField struct {
	index int
	leaf  string // the column's name when the field is a string of a statistics column
}

var boundFields sync.Map // struct type → []boundField

func findLongBounds(v reflect.Value, found map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			findLongBounds(v.Elem(), found)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct || v.Type().Elem().Kind() == reflect.Pointer {
			for i := 0; i < v.Len(); i++ {
				findLongBounds(v.Index(i), found)
			}
		}
	case reflect.Struct:
		for _, f := range boundFieldsOf(v.Type()) {
			field := v.Field(f.index)
			if f.leaf == "" {
				findLongBounds(field, found)
			} else if field.Len() > maxBoundBytes {
				found[f.leaf] = true
			}
		}
	}
}

// boundFieldsOf lists the fields of struct type t that are strings of statistics columns, or
// structs, pointers and slices that may hold some; worked out once per type.
func boundFieldsOf(t reflect.Type) []boundField {
	if fields, ok := boundFields.Load(t); ok {
		return fields.([]boundField)
	}
	var fields []boundField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		switch f.Type.Kind() {
		case reflect.String:
			if statsColumns[name] {
				fields = append(fields, boundField{index: i, leaf: name})
			}
		case reflect.Struct, reflect.Pointer, reflect.Slice:
			if name != "-" {
				fields = append(fields, boundField{index: i})
			}
		}
	}
	boundFields.Store(t, fields)
	return fields
}

// withoutBounds is opts, writer options of schema, with no statistics for the columns whose
// leaf name is in leaves. opts is not modified.
func withoutBounds(opts []parquet.WriterOption, leaves []string) []parquet.WriterOption {
	if len(leaves) == 0 {
		return opts
	}
	out := slices.Clone(opts)
	for _, path := range schemaOf(opts).Columns() {
		if slices.Contains(leaves, path[len(path)-1]) {
			out = append(out, parquet.SkipPageStatistics(path...), parquet.SkipPageBounds(path...))
		}
	}
	return out
}
