package replaycase_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
)

// sameAsMarshalRaw checks that appendValueJSON and json.Marshal(v.AsRaw()) decode to the same
// value, or both fail.
func sameAsMarshalRaw(t *testing.T, v pcommon.Value) {
	t.Helper()
	want, wantErr := json.Marshal(v.AsRaw())
	got, err := replaycase.AppendValueJSON(nil, v)
	if wantErr != nil {
		assert.Error(t, err, "json.Marshal failed with %v", wantErr)
		return
	}
	require.NoError(t, err)
	var w, g any
	require.NoError(t, json.Unmarshal(want, &w))
	require.NoError(t, json.Unmarshal(got, &g), "%s", got)
	assert.Equal(t, w, g)
}

func TestValueJSONMatchesMarshalOfRaw(t *testing.T) {
	v := pcommon.NewValueMap()
	m := v.Map()
	m.PutStr("plain", "héllo wörld 🌍")
	m.PutStr("escapes", "quote\" backslash\\ nl\n cr\r tab\t nul\x00 bell\x07 del\x7f <html>&")
	m.PutStr("invalid utf8", "a\xffb\xc3(c\xed\xa0\x80d")
	m.PutStr("", "empty key")
	m.PutInt("int", math.MinInt64)
	m.PutDouble("double", 1e-300)
	m.PutDouble("big", 1e21)
	m.PutDouble("neg zero", math.Copysign(0, -1))
	m.PutBool("bool", true)
	m.PutEmptyBytes("bytes").FromRaw([]byte{0, 1, 2, 0xff})
	m.PutEmpty("empty")
	s := m.PutEmptySlice("slice")
	s.AppendEmpty().SetStr("x")
	s.AppendEmpty().SetEmptyMap().PutInt("nested", 1)
	s.AppendEmpty().SetEmptySlice()
	s.AppendEmpty()
	m.PutEmptyMap("empty map")
	sameAsMarshalRaw(t, v)

	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		bad := pcommon.NewValueSlice()
		bad.Slice().AppendEmpty().SetDouble(f)
		sameAsMarshalRaw(t, bad)
	}
}

// Every structured attribute of the canonical spans of the fixture cases, as the exporter
// decodes them.
func TestValueJSONMatchesMarshalOfRawOnFixtureCases(t *testing.T) {
	structured := 0
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent} {
		c, _, _ := normalize.Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
		td := ptrace.NewTraces()
		require.NoError(t, replaycase.Encode(c, td))
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					for _, v := range sp.Attributes().All() {
						sameAsMarshalRaw(t, v)
						if v.Type() == pcommon.ValueTypeMap || v.Type() == pcommon.ValueTypeSlice {
							structured++
						}
					}
				}
			}
		}
	}
	require.Greater(t, structured, 20)
}

func FuzzValueJSON(f *testing.F) {
	f.Add("text", int64(1), 0.5, []byte{1})
	f.Add("\xff\x00\"\\", int64(-1), math.Inf(1), []byte(nil))
	f.Fuzz(func(t *testing.T, s string, i int64, d float64, raw []byte) {
		v := pcommon.NewValueMap()
		m := v.Map()
		m.PutStr(s, s)
		m.PutInt("i", i)
		m.PutDouble("d", d)
		m.PutEmptyBytes("b").FromRaw(raw)
		sl := m.PutEmptySlice("s")
		sl.AppendEmpty().SetStr(s)
		sl.AppendEmpty().SetEmptyMap().PutStr(s, s)
		sameAsMarshalRaw(t, v)
	})
}

// BenchmarkDecodeFixtureCases decodes the canonical spans of the four fixture cases, as the
// exporter does for every batch.
func BenchmarkDecodeFixtureCases(b *testing.B) {
	td := ptrace.NewTraces()
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent} {
		c, _, _ := normalize.Build(testfixtures.Traces(b, run), testfixtures.Logs(b, run))
		require.NoError(b, replaycase.Encode(c, td))
	}
	b.ReportAllocs()
	for b.Loop() {
		cases, err := replaycase.Decode(td)
		if err != nil || len(cases) != 4 {
			b.Fatalf("%d cases, %v", len(cases), err)
		}
	}
}

// BenchmarkEncodeFixtureCases encodes the four fixture cases as canonical spans, as the
// processor does for every closed case.
func BenchmarkEncodeFixtureCases(b *testing.B) {
	var cases []*replaycase.Case
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent} {
		c, _, _ := normalize.Build(testfixtures.Traces(b, run), testfixtures.Logs(b, run))
		cases = append(cases, c)
	}
	b.ReportAllocs()
	for b.Loop() {
		td := ptrace.NewTraces()
		for _, c := range cases {
			if err := replaycase.Encode(c, td); err != nil {
				b.Fatal(err)
			}
		}
	}
}
