package replaycase

import (
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Canonical attributes of the fields added after the first canonical form: the workflow name
// (semconv gen_ai.workflow.name), how an agent was invoked (semconv tells it by span kind, which
// the canonical form sets by step kind, so it is spelled out), a step's exception events and
// the run's evaluation events (kept as JSON lists on the span they belong to in the case). A
// step whose span had no parent is written under the case span like the others, and marked so
// that it reads back without one.
const (
	AttrWorkflowName    = "gen_ai.workflow.name"
	AttrAgentInvocation = "replay.agent_invocation"
	AttrExceptions      = "replay.exceptions"
	AttrEvaluations     = "replay.evaluations"
	AttrNoParent        = "replay.step.no_parent"
	// AttrCost is the cost of a step or a case with its price provenance, as a structured value
	// in the shape of Cost (docs/cost.md).
	AttrCost = "replay.cost"
	// AttrStepAPI is the provider API a model or embedding step called (Step.API).
	AttrStepAPI = "replay.step.api"
	// AttrEmbeddings is an embedding step's inputs and vectors (Step.Embeddings), a structured list.
	AttrEmbeddings = "replay.embeddings"
	// AttrResent marks a case sent again after a restart (Case.Resent); set only when true. The
	// processor strips replay.* from what it receives, so only it can set the mark.
	AttrResent = "replay.case.resent"
)

func putCaseExtras(a pcommon.Map, c *Case) {
	putStr(a, AttrWorkflowName, c.WorkflowName)
	putStr(a, AttrAgentInvocation, c.AgentInvocation)
	putJSON(a, AttrEvaluations, c.Evaluations)
	putJSON(a, AttrCost, c.Cost)
	if c.Resent {
		a.PutBool(AttrResent, true)
	}
}

func getCaseExtras(a pcommon.Map, c *Case) error {
	c.WorkflowName = str(a, AttrWorkflowName)
	c.AgentInvocation = str(a, AttrAgentInvocation)
	if v, ok := a.Get(AttrResent); ok && v.Bool() {
		c.Resent = true
	}
	return errors.Join(getJSON(a, AttrEvaluations, &c.Evaluations), getJSON(a, AttrCost, &c.Cost))
}

func putStepExtras(a pcommon.Map, st *Step) {
	putStr(a, AttrStepAPI, st.API)
	putStr(a, AttrWorkflowName, st.WorkflowName)
	putStr(a, AttrAgentInvocation, st.AgentInvocation)
	putJSON(a, AttrExceptions, st.Exceptions)
	putJSON(a, AttrEmbeddings, st.Embeddings)
	putJSON(a, AttrCost, st.Cost)
	if st.ParentSpanID == "" {
		a.PutBool(AttrNoParent, true)
	}
}

func getStepExtras(a pcommon.Map, st *Step) error {
	st.API = str(a, AttrStepAPI)
	st.WorkflowName = str(a, AttrWorkflowName)
	st.AgentInvocation = str(a, AttrAgentInvocation)
	if v, ok := a.Get(AttrNoParent); ok && v.Bool() {
		st.ParentSpanID = ""
	}
	return errors.Join(getJSON(a, AttrExceptions, &st.Exceptions), getJSON(a, AttrCost, &st.Cost), getJSON(a, AttrEmbeddings, &st.Embeddings))
}
