package testfixtures

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// JSONTexts returns every string in the fixture runs' span attributes, span event attributes,
// log attributes and log bodies (maps and slices walked) that holds a JSON object or array:
// the messages, tool schemas and invocation parameters the scrubber and the normalizer parse.
func JSONTexts(tb testing.TB) []string {
	tb.Helper()
	var out []string
	var walk func(v pcommon.Value)
	walk = func(v pcommon.Value) {
		switch v.Type() {
		case pcommon.ValueTypeStr:
			if t := strings.TrimSpace(v.Str()); t != "" && (t[0] == '{' || t[0] == '[') {
				out = append(out, v.Str())
			}
		case pcommon.ValueTypeMap:
			for _, e := range v.Map().All() {
				walk(e)
			}
		case pcommon.ValueTypeSlice:
			for _, e := range v.Slice().All() {
				walk(e)
			}
		}
	}
	walkMap := func(m pcommon.Map) {
		for _, v := range m.All() {
			walk(v)
		}
	}
	for _, run := range []string{OTelEvents, OTelNoContent, Traceloop, OpenInference} {
		td := Traces(tb, run)
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					walkMap(sp.Attributes())
					for _, ev := range sp.Events().All() {
						walkMap(ev.Attributes())
					}
				}
			}
		}
		ld := Logs(tb, run)
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					walkMap(lr.Attributes())
					walk(lr.Body())
				}
			}
		}
	}
	return out
}

// JSONParser is one way to parse a JSON text, for BenchmarkJSONParsers: Parse reports whether
// the text parsed.
type JSONParser struct {
	Name  string
	Parse func(text string) bool
}

// BenchmarkJSONParsers parses every text with each parser, one sub-benchmark per parser, so that
// a new parser and the encoding/json one it replaces are measured on the same fixture JSON.
func BenchmarkJSONParsers(b *testing.B, texts []string, parsers ...JSONParser) {
	size := 0
	for _, text := range texts {
		size += len(text)
	}
	for _, p := range parsers {
		b.Run(p.Name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, text := range texts {
					if !p.Parse(text) {
						b.Fatalf("%s failed on %.80q", p.Name, text)
					}
				}
			}
		})
	}
}
