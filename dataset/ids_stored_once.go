package dataset

import (
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/replaycase"
)

// Span ids stored once in cases/.
//
// A case holds the span id of each tool and retrieval step up to three times (steps[].span_id,
// steps[].tool_call.span_id or steps[].retrieval.span_id, and tool_calls[].span_id or
// retrieval_refs[].span_id), and the span id of the LLM step that asked for a tool call again
// as tool_calls[].requested_by. Span ids are random: no encoding shrinks them, and the copies
// cost about a seventh of a cases/ file. Files whose footer has CaseIDsLayoutKey store them
// once, in steps[].span_id: a copy is NULL when it is what the rule below derives from the
// steps, and readers of this package put it back (fillSpanIDs), so that every Go consumer
// reads the case that was written. A copy that differs from the rule is stored as it is.
//
// The rules, for a NULL copy (docs/case-model.md gives them as SQL):
//   - steps[i].tool_call.span_id and steps[i].retrieval.span_id: steps[i].span_id;
//   - tool_calls[j].span_id: the span id of the last tool step whose tool_call.id is
//     tool_calls[j].id (the execution that the normalizer joined last);
//   - tool_calls[j].requested_by: the span id of the first LLM step with a tool_call part of
//     that id in its output_messages (the request the normalizer joined);
//   - retrieval_refs[k].span_id: the span id of the k-th retrieval step that has a retrieval.
//
// A copy that is empty where the rule derives an id could not be told from a NULL one: a
// batch with such a case is written with every copy (storeSpanIDsOnce reports it), in a file
// without the footer key.

// CaseIDsLayoutKey is the footer key/value entry of cases/ files that store each span id once
// (see above); in files without it (written before, or holding a case the rules do not fit)
// every copy is stored.
const CaseIDsLayoutKey = "reprise.cases_ids_layout"

// CaseIDsLayout is the value of CaseIDsLayoutKey.
const CaseIDsLayout = "span-ids-once"

// storesSpanIDsOnce reports whether a cases/ file stores each span id once.
func storesSpanIDsOnce(pf *parquet.File) bool {
	v, _ := pf.Lookup(CaseIDsLayoutKey)
	return v == CaseIDsLayout
}

// fillRowsSpanIDs puts back the span id copies of the case rows read from pf when the file
// stores them once; rows of other types are left as they are.
func fillRowsSpanIDs[T any](pf *parquet.File, rows []T) {
	cases, ok := any(rows).([]CaseRow)
	if !ok || !storesSpanIDsOnce(pf) {
		return
	}
	for i := range cases {
		fillSpanIDs(&cases[i])
	}
}

// derivedSpanIDs is what the rules derive from a case's steps.
type derivedSpanIDs struct {
	toolStep  map[string]string // tool call id → span id of the last tool step with it
	requester map[string]string // tool call id → span id of the first LLM step asking for it
	retrieval []string          // span ids of the retrieval steps with a retrieval, in order
}

func deriveSpanIDs(steps []replaycase.Step) derivedSpanIDs {
	var d derivedSpanIDs
	d.derive(steps)
	return d
}

// derive sets d to what the rules derive from steps, reusing its maps and slice.
func (d *derivedSpanIDs) derive(steps []replaycase.Step) {
	if d.toolStep == nil {
		d.toolStep, d.requester = map[string]string{}, map[string]string{}
	}
	clear(d.toolStep)
	clear(d.requester)
	d.retrieval = d.retrieval[:0]
	for i := range steps {
		st := &steps[i]
		switch st.Kind {
		case replaycase.StepTool:
			if st.ToolCall != nil && st.ToolCall.ID != "" {
				d.toolStep[st.ToolCall.ID] = st.SpanID
			}
		case replaycase.StepLLM:
			for _, m := range st.OutputMessages {
				for _, p := range m.Parts {
					if _, seen := d.requester[p.ID]; p.Type == "tool_call" && p.ID != "" && !seen {
						d.requester[p.ID] = st.SpanID
					}
				}
			}
		case replaycase.StepRetrieval:
			if st.Retrieval != nil {
				d.retrieval = append(d.retrieval, st.SpanID)
			}
		}
	}
}

func (d derivedSpanIDs) retrievalRef(k int) string {
	if k < len(d.retrieval) {
		return d.retrieval[k]
	}
	return ""
}

// eachSpanIDCopy calls fn with every span id copy of c and the id the rules derive for it
// (d, derived from c's steps): filling, storing and checking the copies walk them alike.
func eachSpanIDCopy(c *replaycase.Case, d *derivedSpanIDs, fn func(copy *string, derived string)) {
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.ToolCall != nil {
			fn(&st.ToolCall.SpanID, st.SpanID)
		}
		if st.Retrieval != nil {
			fn(&st.Retrieval.SpanID, st.SpanID)
		}
	}
	for j := range c.ToolCalls {
		tc := &c.ToolCalls[j]
		fn(&tc.SpanID, d.toolStep[tc.ID])
		fn(&tc.RequestedBy, d.requester[tc.ID])
	}
	for k := range c.RetrievalRefs {
		fn(&c.RetrievalRefs[k].SpanID, d.retrievalRef(k))
	}
}

// fillSpanIDs puts the rules' span id back into every NULL copy of a case read from a file
// that stores them once.
func fillSpanIDs(c *replaycase.Case) {
	d := deriveSpanIDs(c.Steps)
	eachSpanIDCopy(c, &d, func(copy *string, derived string) {
		if *copy == "" {
			*copy = derived
		}
	})
}

// storeSpanIDsOnceIn empties the span id copies of row that equal what the rules derive (d),
// unless a copy is empty where a rule derives an id (it would read back as that id): then row
// is left as it is and the result is false. row's steps, tool calls and retrieval refs are
// replaced by copies first, so that the case row was copied from keeps its own; the steps are
// appended to slab (one allocation for a batch), which is returned.
func storeSpanIDsOnceIn(row *CaseRow, d *derivedSpanIDs, slab []replaycase.Step) ([]replaycase.Step, bool) {
	fits := true
	eachSpanIDCopy(row, d, func(copy *string, derived string) {
		fits = fits && !(*copy == "" && derived != "")
	})
	if !fits {
		return slab, false
	}
	if len(row.Steps) > 0 { // an empty slice has nothing to share
		at := len(slab)
		slab = append(slab, row.Steps...)
		row.Steps = slab[at:len(slab):len(slab)]
	}
	for i := range row.Steps {
		st := &row.Steps[i]
		if st.ToolCall != nil {
			tc := *st.ToolCall
			st.ToolCall = &tc
		}
		if st.Retrieval != nil {
			r := *st.Retrieval
			st.Retrieval = &r
		}
	}
	row.ToolCalls = slices.Clone(row.ToolCalls)
	row.RetrievalRefs = slices.Clone(row.RetrievalRefs)
	eachSpanIDCopy(row, d, func(copy *string, derived string) {
		if *copy == derived {
			*copy = ""
		}
	})
	return slab, true
}

// withIDsOnce is opts with CaseIDsLayoutKey in the footer.
func withIDsOnce(opts []parquet.WriterOption) []parquet.WriterOption {
	return append(slices.Clip(opts), parquet.KeyValueMetadata(CaseIDsLayoutKey, CaseIDsLayout))
}

// byIDsLayout splits segment files of cases/ into those that store span ids once and the
// others (a batch with a case the rules do not fit, or a segment left by an earlier build).
func byIDsLayout(files []mergeSource) (once, every []mergeSource, err error) {
	for _, src := range files {
		f, df, err := open(src.path, parquet.SkipPageIndex(true)) // the footer tells the layout
		if err != nil {
			return nil, nil, err
		}
		if storesSpanIDsOnce(df.pf) {
			once = append(once, src)
		} else {
			every = append(every, src)
		}
		f.Close()
	}
	return once, every, nil
}

// fillSpanIDsOf puts back the span id copies of cases read from pf when the file stores them
// once.
func fillSpanIDsOf(pf *parquet.File, cases map[int64]*CaseRow) {
	if !storesSpanIDsOnce(pf) {
		return
	}
	for _, c := range cases {
		fillSpanIDs(c)
	}
}

// storeSpanIDsOnce stores the span ids of a batch's cases/ or quarantine/ rows once, in place
// (byDay's rows are the writer's copies of the cases, whose own steps, tool calls and retrieval
// refs are left as they are), and reports whether it did. When the rules do not fit one row,
// the rows it had changed are filled again (fillSpanIDs undoes storeSpanIDsOnceIn for a row
// that fits: FuzzSpanIDsStoredOnce) and every row keeps every copy.
func storeSpanIDsOnce(byDay map[string][]CaseRow) bool {
	steps, rows := 0, 0
	for _, day := range byDay {
		rows += len(day)
		for i := range day {
			steps += len(day[i].Steps)
		}
	}
	slab := make([]replaycase.Step, 0, steps)
	stored := make([]*CaseRow, 0, rows)
	var d derivedSpanIDs
	for _, day := range byDay {
		for i := range day {
			d.derive(day[i].Steps)
			var fits bool
			if slab, fits = storeSpanIDsOnceIn(&day[i], &d, slab); !fits {
				for _, row := range stored {
					fillSpanIDs(row)
				}
				return false
			}
			stored = append(stored, &day[i])
		}
	}
	return true
}

// idsLayoutOptions stores the span ids of byDay's rows once when they all fit (storeSpanIDsOnce)
// and returns the options that write them: idsOnce then, every otherwise.
func idsLayoutOptions(byDay map[string][]CaseRow, every, idsOnce []parquet.WriterOption) []parquet.WriterOption {
	if storeSpanIDsOnce(byDay) {
		return idsOnce
	}
	return every
}
