// Package roundtrip compares a case read back from Parquet with the case that was written.
package roundtrip

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/replaycase"
)

// AssertSameCase compares a case read from Parquet with the one that was written. Parquet
// keeps microseconds, has no nil/empty distinction for lists and maps, and stores empty
// optional strings as NULL (read back as ""), so both sides are normalized for those first.
func AssertSameCase(t testing.TB, want, got replaycase.Case) {
	t.Helper()
	normalize(reflect.ValueOf(&want).Elem())
	normalize(reflect.ValueOf(&got).Elem())
	assert.Equal(t, want, got)
}

func normalize(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalize(v.Elem())
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			if v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		if v.Kind() == reflect.Slice {
			for i := 0; i < v.Len(); i++ {
				normalize(v.Index(i))
			}
		}
	case reflect.Struct:
		if tm, ok := v.Addr().Interface().(*time.Time); ok {
			*tm = tm.Truncate(time.Microsecond).UTC()
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				normalize(v.Field(i))
			}
		}
	}
}
