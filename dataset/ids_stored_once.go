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

// fillSpanIDs puts the rules' span id back into every NULL copy of a case read from a file
// that stores them once.
func fillSpanIDs(c *replaycase.Case) {
	d := deriveSpanIDs(c.Steps)
	fill := func(copy *string, derived string) {
		if *copy == "" {
			*copy = derived
		}
	}
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.ToolCall != nil {
			fill(&st.ToolCall.SpanID, st.SpanID)
		}
		if st.Retrieval != nil {
			fill(&st.Retrieval.SpanID, st.SpanID)
		}
	}
	for j := range c.ToolCalls {
		tc := &c.ToolCalls[j]
		fill(&tc.SpanID, d.toolStep[tc.ID])
		fill(&tc.RequestedBy, d.requester[tc.ID])
	}
	for k := range c.RetrievalRefs {
		fill(&c.RetrievalRefs[k].SpanID, d.retrievalRef(k))
	}
}

// storeSpanIDsOnce is the row of c in a file that stores span ids once: a copy of c whose span
// id copies are NULL where the rules derive them (c is not modified). ok is false when a copy
// is empty where a rule derives an id: that case must go in a file with every copy.
func storeSpanIDsOnce(c *replaycase.Case) (row CaseRow, ok bool) {
	d := deriveSpanIDs(c.Steps)
	if !fitsSpanIDsOnce(c, &d) {
		return CaseRow{}, false
	}
	row = *c
	dropDerivedSpanIDs(&row, &d, nil)
	return row, true
}

// fitsSpanIDsOnce reports whether no span id copy of c is empty where the rules (d, derived
// from c's steps) give an id: a NULL copy would then read back as that id.
func fitsSpanIDsOnce(c *replaycase.Case, d *derivedSpanIDs) bool {
	emptyWhereDerived := func(copy, derived string) bool { return copy == "" && derived != "" }
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.ToolCall != nil && emptyWhereDerived(st.ToolCall.SpanID, st.SpanID) {
			return false
		}
		if st.Retrieval != nil && emptyWhereDerived(st.Retrieval.SpanID, st.SpanID) {
			return false
		}
	}
	for _, tc := range c.ToolCalls {
		if emptyWhereDerived(tc.SpanID, d.toolStep[tc.ID]) || emptyWhereDerived(tc.RequestedBy, d.requester[tc.ID]) {
			return false
		}
	}
	for k, r := range c.RetrievalRefs {
		if emptyWhereDerived(r.SpanID, d.retrievalRef(k)) {
			return false
		}
	}
	return true
}

// dropDerivedSpanIDs empties the span id copies of row that equal what the rules derive (d).
// row's steps, tool calls and retrieval refs are replaced by copies, so that the case row was
// copied from keeps its own; the steps are appended to slab (one allocation for a batch), which
// is returned.
func dropDerivedSpanIDs(row *CaseRow, d *derivedSpanIDs, slab []replaycase.Step) []replaycase.Step {
	drop := func(copy *string, derived string) {
		if *copy == derived {
			*copy = ""
		}
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
			drop(&tc.SpanID, st.SpanID)
			st.ToolCall = &tc
		}
		if st.Retrieval != nil {
			r := *st.Retrieval
			drop(&r.SpanID, st.SpanID)
			st.Retrieval = &r
		}
	}
	row.ToolCalls = slices.Clone(row.ToolCalls)
	for j := range row.ToolCalls {
		tc := &row.ToolCalls[j]
		drop(&tc.SpanID, d.toolStep[tc.ID])
		drop(&tc.RequestedBy, d.requester[tc.ID])
	}
	row.RetrievalRefs = slices.Clone(row.RetrievalRefs)
	for k := range row.RetrievalRefs {
		drop(&row.RetrievalRefs[k].SpanID, d.retrievalRef(k))
	}
	return slab
}

// withIDsOnce is opts with CaseIDsLayoutKey in the footer.
func withIDsOnce(opts []parquet.WriterOption) []parquet.WriterOption {
	return append(slices.Clip(opts), parquet.KeyValueMetadata(CaseIDsLayoutKey, CaseIDsLayout))
}

// byIDsLayout splits segment files of cases/ into those that store span ids once and the
// others (a batch with a case the rules do not fit, or a segment left by an earlier build).
func byIDsLayout(files []mergeSource) (once, every []mergeSource, err error) {
	for _, src := range files {
		f, pf, err := open(src.path, parquet.SkipPageIndex(true)) // the footer tells the layout
		if err != nil {
			return nil, nil, err
		}
		if storesSpanIDsOnce(pf) {
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

// storeSpanIDsOnceIfAllFit stores the span ids of a batch's cases/ or quarantine/ rows once,
// in place (byDay's rows are the writer's copies of the cases, whose own steps, tool calls and
// retrieval refs are left as they are), and returns the options that write them (idsOnce); when
// the rules do not fit one case, it leaves every row as it is and returns the options without
// the footer key (every).
func storeSpanIDsOnceIfAllFit(byDay map[string][]CaseRow, every, idsOnce []parquet.WriterOption) (map[string][]CaseRow, []parquet.WriterOption) {
	var d derivedSpanIDs
	steps := 0
	for _, rows := range byDay {
		for i := range rows {
			d.derive(rows[i].Steps)
			if !fitsSpanIDsOnce(&rows[i], &d) {
				return byDay, every
			}
			steps += len(rows[i].Steps)
		}
	}
	slab := make([]replaycase.Step, 0, steps)
	for _, rows := range byDay {
		for i := range rows {
			d.derive(rows[i].Steps)
			slab = dropDerivedSpanIDs(&rows[i], &d, slab)
		}
	}
	return byDay, idsOnce
}
