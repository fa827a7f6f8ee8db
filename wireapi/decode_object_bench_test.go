package wireapi

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecodeObject decodes the recorded SDK request into its body type with decodeObject's
// fast decoder and, for comparison, with encoding/json, which decodeObject falls back to.
// Run: go test -run '^$' -bench DecodeObject -benchmem ./wireapi/
func BenchmarkDecodeObject(b *testing.B) {
	body := sdkBody(b)
	b.Run("decodeObject", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v chatBody
			if err := decodeObject(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v chatBody
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
