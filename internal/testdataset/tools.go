package testdataset

import (
	"fmt"
	"slices"

	"github.com/reprise-dev/reprise/replaycase"
)

// OfferingTools makes n copies of cases, each with an id of its own, whose model calls offer the
// tools that tools gives for the copy's case id and the step's index.
func OfferingTools(cases []*replaycase.Case, n int, tools func(caseID string, step int) []replaycase.ToolDefinition) []*replaycase.Case {
	var out []*replaycase.Case
	for i := range n {
		for _, original := range cases {
			c := *original
			c.CaseID = replaycase.ID(c.Provenance.TraceID, fmt.Sprint(i))
			c.Steps = slices.Clone(c.Steps)
			for s := range c.Steps {
				if c.Steps[s].Kind == replaycase.StepLLM {
					c.Steps[s].ToolDefinitions = tools(c.CaseID, s)
				}
			}
			out = append(out, &c)
		}
	}
	return out
}

// DistinctTools gives n tools, each with a short schema no other call's tools have.
func DistinctTools(n int) func(caseID string, step int) []replaycase.ToolDefinition {
	return func(caseID string, step int) []replaycase.ToolDefinition {
		defs := make([]replaycase.ToolDefinition, n)
		for k := range defs {
			defs[k] = replaycase.ToolDefinition{Type: "function", Name: fmt.Sprintf("tool_%d", k),
				Parameters: fmt.Sprintf(`{"id":"%s/%d/%d"}`, caseID, step, k)}
		}
		return defs
	}
}
