package casediff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes the report as indented JSON (the contract).
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes the report for a person: one table per decision point, in order.
func WriteMarkdown(w io.Writer, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s → %s\n", caseLabel(r.A), caseLabel(r.B))
	for _, side := range []struct {
		name string
		ref  CaseRef
	}{{"A", r.A}, {"B", r.B}} {
		if side.ref.Mutation != "" { // as `reprise show` says it
			fmt.Fprintf(&b, "\n%s `%s` is a mutation of case `%s`, not a recorded run: %s\n", side.name, side.ref.CaseID, side.ref.MutationOf, side.ref.Mutation)
		}
	}
	if len(r.Findings) == 0 {
		b.WriteString("\nNo differences at any decision point.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	var point DecisionPoint
	for _, f := range r.Findings {
		if f.DecisionPoint != point {
			point = f.DecisionPoint
			fmt.Fprintf(&b, "\n### %s\n\n| finding | where | before | after | detail |\n|---|---|---|---|---|\n", point)
		}
		where := f.PathB
		if where == "" {
			where = f.PathA
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s |\n", f.Type, where, cell(f.Before), cell(f.After), cell(f.Detail))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func caseLabel(c CaseRef) string {
	if c.AgentName != "" {
		return fmt.Sprintf("`%s` (%s, %s)", c.CaseID, c.AgentName, c.Status)
	}
	return fmt.Sprintf("`%s` (%s)", c.CaseID, c.Status)
}

// cell renders a value for one Markdown table cell: JSON for structures, truncated, with the
// characters that would break the table escaped.
func cell(v any) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "…"
	}
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}
