package replaycase

import (
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// putValue stores v as a structured attribute value, field names and omitempty taken from the
// JSON tags, so that the value reads back with encoding/json exactly as it was (see getJSON).
// It is the encoder's hot path; it avoids a JSON round trip per attribute.
func putValue(dst pcommon.Value, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			putValue(dst, v.Elem())
		}
	case reflect.String:
		dst.SetStr(v.String())
	case reflect.Bool:
		dst.SetBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		dst.SetInt(v.Int())
	case reflect.Float32, reflect.Float64:
		dst.SetDouble(v.Float())
	case reflect.Slice:
		if v.IsNil() {
			return // null, as encoding/json writes it
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			dst.SetEmptyBytes().FromRaw(v.Bytes())
			return
		}
		s := dst.SetEmptySlice()
		s.EnsureCapacity(v.Len())
		for i := 0; i < v.Len(); i++ {
			putValue(s.AppendEmpty(), v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		m := dst.SetEmptyMap()
		m.EnsureCapacity(v.Len())
		iter := v.MapRange()
		for iter.Next() {
			putValue(m.PutEmpty(iter.Key().String()), iter.Value())
		}
	case reflect.Struct:
		m := dst.SetEmptyMap()
		fields := structFields(v.Type())
		n := 0
		for _, f := range fields {
			if !f.omitEmpty || !v.Field(f.index).IsZero() {
				n++
			}
		}
		m.EnsureCapacity(n) // most parts and messages use few of their fields
		for _, f := range fields {
			fv := v.Field(f.index)
			if f.omitEmpty && fv.IsZero() {
				continue
			}
			putValue(m.PutEmpty(f.name), fv)
		}
	}
}

type field struct {
	index     int
	name      string
	omitEmpty bool
	floatPtr  bool // a *float64: getValue points such fields into one array (floatPointees)
}

var fieldCache sync.Map // reflect.Type -> []field

// structFields lists the JSON-visible fields of a struct type.
func structFields(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fs = append(fs, field{index: i, name: name, omitEmpty: opts == "omitempty", floatPtr: f.Type == floatPtrType})
	}
	fieldCache.Store(t, fs)
	return fs
}

// errNotDirect means getValue met a value it does not decode exactly as encoding/json would
// (a type other than the one putValue writes, a key that is no field name, invalid UTF-8, a
// type with its own JSON decoding): the caller decodes that attribute through JSON instead.
var errNotDirect = errors.New("not decodable directly")

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// selfDecoding caches decodesItself per type: the method-set checks (reflect.PointerTo looks
// the pointer type up in a global cache) cost more than the decoding of a small value.
var selfDecoding sync.Map // reflect.Type -> bool

// decodesItself reports whether encoding/json would hand a value of type t to the type's own
// UnmarshalJSON or UnmarshalText (through t or *t; a pointer is followed to its element first).
func decodesItself(t reflect.Type) bool {
	if b, ok := selfDecoding.Load(t); ok {
		return b.(bool)
	}
	b := t.Kind() != reflect.Pointer && (t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		reflect.PointerTo(t).Implements(textUnmarshaler))
	selfDecoding.Store(t, b)
	return b
}

// getValue is putValue backwards: it decodes a structured attribute value straight into dst,
// which must hold its zero value, as json.Unmarshal of the attribute's JSON would, without the
// JSON text in between. It handles the shapes putValue writes and returns errNotDirect for
// anything else, leaving dst partly written.
func getValue(src pcommon.Value, dst reflect.Value) error {
	t := dst.Type()
	if decodesItself(t) {
		return errNotDirect
	}
	if src.Type() == pcommon.ValueTypeEmpty {
		return nil // null leaves the zero value
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := getValue(src, p.Elem()); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.String:
		if src.Type() != pcommon.ValueTypeStr || !utf8.ValidString(src.Str()) {
			return errNotDirect
		}
		dst.SetString(src.Str())
		return nil
	case reflect.Bool:
		if src.Type() != pcommon.ValueTypeBool {
			return errNotDirect
		}
		dst.SetBool(src.Bool())
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if src.Type() != pcommon.ValueTypeInt || dst.OverflowInt(src.Int()) {
			return errNotDirect
		}
		dst.SetInt(src.Int())
		return nil
	case reflect.Float32, reflect.Float64:
		if src.Type() != pcommon.ValueTypeDouble {
			return errNotDirect
		}
		f := src.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) || dst.OverflowFloat(f) {
			return errNotDirect
		}
		dst.SetFloat(f)
		return nil
	case reflect.Slice:
		if src.Type() != pcommon.ValueTypeSlice || t.Elem().Kind() == reflect.Uint8 {
			return errNotDirect
		}
		s := src.Slice()
		if s.Len() == 0 {
			dst.Set(reflect.MakeSlice(t, 0, 0)) // [] is an empty slice, not nil
			return nil
		}
		// Grown in place: dst is a nil slice here (a zero field, element or target), and
		// MakeSlice would allocate a slice header besides the array.
		dst.Grow(s.Len())
		dst.SetLen(s.Len())
		for i := 0; i < s.Len(); i++ {
			if err := getValue(s.At(i), dst.Index(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if src.Type() != pcommon.ValueTypeMap || t.Key().Kind() != reflect.String {
			return errNotDirect
		}
		m := src.Map()
		out := reflect.MakeMapWithSize(t, m.Len())
		e := reflect.New(t.Elem()).Elem() // SetMapIndex copies it: one for every entry
		for k, v := range m.All() {
			if !utf8.ValidString(k) {
				return errNotDirect
			}
			e.SetZero()
			if err := getValue(v, e); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
		}
		dst.Set(out)
		return nil
	case reflect.Struct:
		if src.Type() != pcommon.ValueTypeMap {
			return errNotDirect
		}
		fields := structFields(t)
		var floats []float64
		for k, v := range src.Map().All() {
			f, ok := fieldNamed(fields, k)
			if !ok {
				return errNotDirect // json matches other spellings case-insensitively, or ignores the key
			}
			fv := dst.Field(f.index)
			if !fv.IsZero() {
				return errNotDirect // a key given twice: json merges the second into the first
			}
			if f.floatPtr && v.Type() == pcommon.ValueTypeDouble { // the Pointer case, into the array
				if floats == nil {
					floats = floatPointees(fields)
				}
				floats = append(floats, 0) // never beyond its capacity: each field is set once
				p := &floats[len(floats)-1]
				if err := getValue(v, reflect.ValueOf(p).Elem()); err != nil {
					return err
				}
				fv.Set(reflect.ValueOf(p))
				continue
			}
			if err := getValue(v, fv); err != nil {
				return err
			}
		}
		return nil
	}
	return errNotDirect
}

var floatPtrType = reflect.TypeFor[*float64]()

// floatPointees is one array for the values of a struct's *float64 fields, as many as it has:
// a cost has a dozen figures, each of which took an allocation of its own.
func floatPointees(fields []field) []float64 {
	n := 0
	for _, f := range fields {
		if f.floatPtr {
			n++
		}
	}
	return make([]float64, 0, n)
}

func fieldNamed(fields []field, name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}
