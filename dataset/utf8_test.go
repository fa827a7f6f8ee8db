package dataset

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// fillInvalid sets every string reachable from v to invalid UTF-8 and every bool to true,
// allocating one element of every nil pointer, slice and map on the way (to depth 12), and
// returns how many strings it set.
func fillInvalid(v reflect.Value, depth int) int {
	if depth == 0 {
		return 0
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("bad\xff")
		return 1
	case reflect.Bool:
		v.SetBool(true) // an optional flag (over_budget, a part's is_error) written as set
		return 0
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return fillInvalid(v.Elem(), depth-1)
	case reflect.Struct:
		n := 0
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				n += fillInvalid(v.Field(i), depth-1)
			}
		}
		return n
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("bad\xff")) // a BLOB: left as it is
			return 0
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		return fillInvalid(v.Index(0), depth-1)
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		n := fillInvalid(k, depth-1) + fillInvalid(e, depth-1)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
		return n
	}
	return 0
}

// allValid reports whether every string reachable from v is valid UTF-8.
func allValid(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || allValid(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && !allValid(v.Field(i)) {
				return false
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return true
		}
		for i := 0; i < v.Len(); i++ {
			if !allValid(v.Index(i)) {
				return false
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if !allValid(k) || !allValid(v.MapIndex(k)) {
				return false
			}
		}
	}
	return true
}

// Every string of a case and of a steps/ row is repaired: the walk skips only what cannot hold
// a string.
func TestRepairUTF8ReachesEveryString(t *testing.T) {
	for _, row := range []any{&replaycase.Case{}, &StepRow{}} {
		v := reflect.ValueOf(row)
		set := fillInvalid(v, 12)
		t.Logf("%T: %d strings", row, set)
		assert.Greater(t, set, 20)
		assert.Equal(t, set, RepairUTF8(row), "%T", row)
		assert.True(t, allValid(v), "%T", row)
		assert.Zero(t, RepairUTF8(row), "a repaired row is left alone")
	}
}

// Keys that repair to the same key ("k\xff" and "k\xfe" both become "k\uFFFD", a valid key of
// the map too) keep every entry: one stored over the other would lose a value without a trace.
func TestRepairUTF8KeepsEveryMapEntry(t *testing.T) {
	base := t.TempDir()
	w, err := NewWriter(WriterConfig{
		Root: filepath.Join(base, "data"), Staging: filepath.Join(base, "staging"),
		Compression: "zstd", MaxRowsPerFile: 10, RowGroupRows: 10,
	})
	require.NoError(t, err)
	c := &replaycase.Case{
		CaseID: "c", SchemaVersion: SchemaVersion, Status: replaycase.StatusAccepted,
		StartTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Metadata:  map[string]string{"k\xff": "1", "k\xfe": "2", "k\uFFFD": "3", "v": "bad\xff"},
	}
	res, err := w.Write([]*replaycase.Case{c})
	require.NoError(t, err)
	assert.Equal(t, 3, res.RepairedStrings)
	var path string
	for _, f := range res.Files {
		if f.Dataset == Cases {
			path = f.Path
		}
	}
	rows, err := ReadCases(path)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, map[string]string{
		"k\uFFFD":             "3", // the valid key keeps its entry
		"k\uFFFD\uFFFD":       "2", // "k\xfe" sorts before "k\xff"
		"k\uFFFD\uFFFD\uFFFD": "1",
		"v":                   "bad\uFFFD",
	}, rows[0].Metadata)
}
