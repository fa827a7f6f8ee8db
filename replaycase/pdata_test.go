package replaycase

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// decodesItself answers from its cache what the method-set checks answer, the first time and
// after: a type with its own JSON or text decoding (directly or through its pointer) is left to
// encoding/json, a pointer is followed first, anything else is decoded directly.
func TestDecodesItself(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[time.Time](), true},       // UnmarshalJSON on *time.Time
		{reflect.TypeFor[json.RawMessage](), true}, // UnmarshalJSON on *RawMessage
		{reflect.TypeFor[json.Number](), false},    // a string kind without methods of its own
		{reflect.TypeFor[*time.Time](), false},     // the pointer is followed, then time.Time decides
		{reflect.TypeFor[Message](), false},        // a case type: decoded field by field
		{reflect.TypeFor[map[string]int64](), false},
	} {
		for range 2 { // the second answer comes from the cache
			if got := decodesItself(tc.typ); got != tc.want {
				t.Errorf("decodesItself(%v) = %v, want %v", tc.typ, got, tc.want)
			}
		}
	}
}
