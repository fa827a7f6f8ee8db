package dataset_test

import (
	"encoding/json"
	"fmt"

	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testdataset/roundtrip"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// everyFixtureCase is the cases of every recorded run in testdata/otlp, accepted and
// quarantined.
func everyFixtureCase(t *testing.T) []*replaycase.Case {
	cases := testpipeline.Run(t, nil, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent, testfixtures.OpenInference)
	datasets := map[string]bool{}
	for _, c := range cases {
		datasets[DatasetOf(c)] = true
	}
	require.Equal(t, map[string]bool{Cases: true, Quarantine: true}, datasets)
	return cases
}

// writeOneBatch writes cases as one batch and returns its cases/ and quarantine/ files.
func writeOneBatch(t *testing.T, cases []*replaycase.Case) []File {
	w := newWriter(t)
	_, err := w.Write(cases)
	require.NoError(t, err)
	files := listedCaseFiles(t, w.Root())
	require.Len(t, files, 2)
	return files
}

// listedCaseFiles is the cases/ and quarantine/ files under root, as the lister gives them.
func listedCaseFiles(t *testing.T, root string) []File {
	files, err := NewLister(root, Cases, Quarantine).Next()
	require.NoError(t, err)
	return files
}

// copiesOf counts the span id copies of cases (what storing ids once leaves NULL).
func copiesOf(cases []CaseRow) (n int) {
	for _, c := range cases {
		for _, st := range c.Steps {
			if st.ToolCall != nil && st.ToolCall.SpanID != "" {
				n++
			}
			if st.Retrieval != nil && st.Retrieval.SpanID != "" {
				n++
			}
		}
		for _, tc := range c.ToolCalls {
			n += min(len(tc.SpanID), 1) + min(len(tc.RequestedBy), 1)
		}
		for _, r := range c.RetrievalRefs {
			n += min(len(r.SpanID), 1)
		}
	}
	return n
}

// rawCases reads a cases/ file with parquet-go alone, as a notebook would: no copy filled.
func rawCases(t *testing.T, path string) (rows []CaseRow, layout string) {
	rows, err := parquet.ReadFile[CaseRow](path)
	require.NoError(t, err)
	layout, _ = testdataset.OpenParquet(t, path).Lookup(CaseIDsLayoutKey)
	return rows, layout
}

// assertEveryReaderGives reads the cases/ file at path with every reader of the package and
// compares each case with the one written.
func assertEveryReaderGives(t *testing.T, path string, want map[string]replaycase.Case) {
	t.Helper()
	all, err := ReadCases(path)
	require.NoError(t, err)
	require.NotEmpty(t, all)
	rows := make([]int64, len(all))
	for i, c := range all {
		require.Contains(t, want, c.CaseID)
		roundtrip.AssertSameCase(t, want[c.CaseID], c)
		rows[i] = int64(i)
		one, err := ReadCase(path, int64(i))
		require.NoError(t, err)
		roundtrip.AssertSameCase(t, want[c.CaseID], *one)
	}
	some, err := ReadRows(path, rows)
	require.NoError(t, err)
	require.Len(t, some, len(all))
	for _, c := range some {
		w := want[c.CaseID]
		w.RawSpans, w.RawEvents = nil, nil
		roundtrip.AssertSameCase(t, w, *c)
	}
	require.NoError(t, ScanCases(path, 0, 2, func(_ int64, c *CaseRow) error {
		roundtrip.AssertSameCase(t, want[c.CaseID], *c)
		return nil
	}))
	open, err := OpenCaseFile(path) // the replay extension's reads by id
	require.NoError(t, err)
	defer open.Close()
	for i := range rows {
		c, err := open.ReadCase(int64(i))
		require.NoError(t, err)
		w := want[c.CaseID]
		w.RawSpans, w.RawEvents = nil, nil
		roundtrip.AssertSameCase(t, w, *c)
	}
}

func byID(cases []*replaycase.Case) map[string]replaycase.Case {
	want := map[string]replaycase.Case{}
	for _, c := range cases {
		want[c.CaseID] = *c
	}
	return want
}

func TestSpanIDsAreStoredOnceAndEveryReaderPutsThemBack(t *testing.T) {
	cases := everyFixtureCase(t)
	want := byID(cases)
	given := make([]CaseRow, 0, len(cases))
	for _, c := range cases {
		given = append(given, *c)
	}
	require.Positive(t, copiesOf(given), "the fixtures have tool calls or retrievals")

	before := snapshot(t, cases)
	files := writeOneBatch(t, cases)
	assert.JSONEq(t, before, snapshot(t, cases), "the cases given keep every copy")
	for _, f := range files {
		stored, layout := rawCases(t, f.Path)
		assert.Equal(t, CaseIDsLayout, layout, "%s: the footer says the copies are NULL", f.Dataset)
		assert.Zero(t, copiesOf(stored), "%s: every copy is derived from the steps, so none is stored", f.Dataset)
		for _, c := range stored {
			for _, st := range c.Steps {
				assert.NotEmpty(t, st.SpanID, "the step keeps its span id")
			}
		}
		assertEveryReaderGives(t, f.Path, want)
	}
}

// snapshot is cases as JSON, ordered by case id: the writer sorts the slice it is given.
func snapshot(t *testing.T, cases []*replaycase.Case) string {
	t.Helper()
	b, err := json.Marshal(byID(cases))
	require.NoError(t, err)
	return string(b)
}

// breakRule empties the first tool step's tool_call.span_id of a case: empty where the rule
// derives the step's span id. It reports whether the case has a tool step.
func breakRule(c *replaycase.Case) bool {
	for j := range c.Steps {
		if tc := c.Steps[j].ToolCall; tc != nil {
			tc.SpanID = ""
			return true
		}
	}
	return false
}

func TestACaseTheRulesDoNotFitIsWrittenWithEveryCopy(t *testing.T) {
	cases := everyFixtureCase(t)
	// The last case the writer visits (it sorts by start time): the cases before it have had
	// their span ids stored once, and must get every copy back.
	var odd *replaycase.Case
	for _, c := range cases {
		if DatasetOf(c) == Cases && (odd == nil || !c.StartTime.Before(odd.StartTime)) {
			odd = c
		}
	}
	require.NotNil(t, odd)
	require.True(t, breakRule(odd), "the last accepted fixture case has a tool step")
	want := byID(cases)

	before := snapshot(t, cases)
	files := writeOneBatch(t, cases)
	assert.JSONEq(t, before, snapshot(t, cases), "the cases given are left as they are")
	for _, f := range files {
		stored, layout := rawCases(t, f.Path)
		if f.Dataset == Cases {
			assert.Empty(t, layout, "a file with every copy, as before the layout")
			assert.Positive(t, copiesOf(stored))
		} else {
			assert.Equal(t, CaseIDsLayout, layout, "quarantine/ of the same batch fits the rules")
		}
		assertEveryReaderGives(t, f.Path, want)
	}
}

func TestMergedSegmentsKeepOneLayoutPerFile(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	fit := everyFixtureCase(t)
	want := byID(fit)
	_, err := w.Write(fit)
	require.NoError(t, err)

	odd := everyFixtureCase(t)
	for _, c := range odd {
		c.CaseID = replaycase.ID(c.Provenance.TraceID, "odd")
		breakRule(c)
		want[c.CaseID] = *c
	}
	_, err = w.Write(odd)
	require.NoError(t, err)
	_, err = w.Flush(true)
	require.NoError(t, err)

	files := listedCaseFiles(t, w.Root())
	layouts := map[string]int{}
	for _, f := range files {
		stored, layout := rawCases(t, f.Path)
		layouts[f.Dataset+" "+layout] += len(stored)
		if layout == CaseIDsLayout {
			assert.Zero(t, copiesOf(stored))
		}
		assertEveryReaderGives(t, f.Path, want)
	}
	count := func(cases []*replaycase.Case, dataset string) (n int) {
		for _, c := range cases {
			if DatasetOf(c) == dataset {
				n++
			}
		}
		return n
	}
	assert.Equal(t, map[string]int{
		Cases + " " + CaseIDsLayout: count(fit, Cases), Cases + " ": count(odd, Cases),
		Quarantine + " " + CaseIDsLayout: count(fit, Quarantine), Quarantine + " ": count(odd, Quarantine),
	}, layouts, "one file per dataset and layout")
}

// FuzzSpanIDsStoredOnce changes the span ids of fixture cases and their copies (the fuzzer's
// bytes pick, for each, to keep it, empty it, or set it to another case's id) and checks the
// property the writer relies on: when StoreSpanIDsOnce accepts a case, filling its row gives
// the case back exactly, and the case given is never modified.
func FuzzSpanIDsStoredOnce(f *testing.F) {
	cases := testpipeline.Run(f, nil, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent, testfixtures.OpenInference)
	f.Add([]byte{})
	f.Add([]byte{1, 2, 0, 1, 2, 2, 1, 0, 0, 1})
	f.Add([]byte{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2})
	f.Add([]byte{0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 3, 5, 7})
	f.Fuzz(func(t *testing.T, choices []byte) {
		var seq int
		next := func() byte {
			if seq >= len(choices) {
				return 0
			}
			seq++
			return choices[seq-1] % 3
		}
		change := func(id *string) {
			switch next() {
			case 1:
				*id = ""
			case 2:
				*id = fmt.Sprintf("%016x", seq)
			}
		}
		for _, given := range cases {
			var c replaycase.Case
			b, err := json.Marshal(given)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &c))
			for i := range c.Steps {
				st := &c.Steps[i]
				change(&st.SpanID)
				if st.ToolCall != nil {
					change(&st.ToolCall.SpanID)
				}
				if st.Retrieval != nil {
					change(&st.Retrieval.SpanID)
				}
			}
			for j := range c.ToolCalls {
				change(&c.ToolCalls[j].SpanID)
				change(&c.ToolCalls[j].RequestedBy)
			}
			for k := range c.RetrievalRefs {
				change(&c.RetrievalRefs[k].SpanID)
			}
			before, err := json.Marshal(&c)
			require.NoError(t, err)
			row, ok := StoreSpanIDsOnce(&c)
			after, err := json.Marshal(&c)
			require.NoError(t, err)
			require.JSONEq(t, string(before), string(after), "the case given is not modified")
			if !ok {
				continue // written with every copy, in a file without the footer key
			}
			FillSpanIDs(&row)
			require.Equal(t, c, row, "filling the stored row gives the case back")
		}
	})
}
