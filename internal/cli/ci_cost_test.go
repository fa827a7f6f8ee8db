package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/pricing"
	"github.com/reprise-dev/reprise/replaycase"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// runOf is an accepted run of one model call of model, priced with the built-in table.
func runOf(t *testing.T, id, model string, outputTokens int64) *replaycase.Case {
	t.Helper()
	c := &replaycase.Case{CaseID: id, Status: replaycase.StatusAccepted, Steps: []replaycase.Step{{
		Kind: replaycase.StepLLM, SpanID: "01",
		ModelConfig: replaycase.ModelConfig{Provider: "openai", RequestModel: model},
		Usage:       replaycase.Usage{InputTokens: 1000, OutputTokens: outputTokens},
	}}}
	pricing.Apply(c, must(pricing.Embedded()), nil)
	return c
}

// A policy that gates on cost_changed cannot fail a run whose cost has no figure on either side
// (two runs of a model the table does not know), however many more tokens it used: the case
// passes, and its message says the cost was not compared rather than leaving a silent pass.
func TestCICostGateSaysWhenTheCostWasNotCompared(t *testing.T) {
	gate := Policy{FailOn: []casediff.FindingType{casediff.CostChanged}}
	judged := func(a, b *replaycase.Case, p Policy) caseResult {
		r := caseResult{CaseID: a.CaseID}
		judge(&r, a, b, p, nil)
		return r
	}

	r := judged(runOf(t, "a", "in-house-7b", 10), runOf(t, "b", "in-house-7b", 5000), gate)
	assert.Equal(t, outcomePassed, r.Outcome)
	assert.Contains(t, r.Message, "cost not compared: both runs are unpriced")

	// Partial on both sides with the same figure: the unpriced call may have changed unseen.
	partial := func(id string, unpricedTokens int64) *replaycase.Case {
		c := runOf(t, id, "gpt-4o", 10)
		c.Steps = append(c.Steps, runOf(t, id, "in-house-7b", unpricedTokens).Steps...)
		c.Steps[1].SpanID = "02"
		pricing.Apply(c, must(pricing.Embedded()), nil)
		return c
	}
	r = judged(partial("a", 10), partial("b", 5000), gate)
	assert.Equal(t, outcomePassed, r.Outcome)
	assert.Contains(t, r.Message, "cost not compared: both runs are partial")

	// Priced on both sides: compared, and a change fails the case as the policy says.
	r = judged(runOf(t, "a", "gpt-4o", 10), runOf(t, "b", "gpt-4o", 5000), gate)
	assert.Equal(t, outcomeFailed, r.Outcome)
	assert.NotContains(t, r.Message, "not compared")
	r = judged(runOf(t, "a", "gpt-4o", 10), runOf(t, "b", "gpt-4o", 10), gate)
	assert.Equal(t, outcomePassed, r.Outcome)
	assert.Empty(t, r.Message)

	// A policy that does not gate on cost has nothing to say about it.
	r = judged(runOf(t, "a", "in-house-7b", 10), runOf(t, "b", "in-house-7b", 5000), Policy{})
	assert.Equal(t, outcomePassed, r.Outcome)
	assert.Empty(t, r.Message)
}
