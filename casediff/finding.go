// Package casediff compares two replay cases decision point by decision point: what was
// retrieved, which tools fired with which arguments and results, what the model was asked with
// which settings and what it answered, which route the agent took and what it answered; then
// usage, cost and latency.
// Each difference is a typed Finding with the JSON paths of the values in both cases. The JSON
// encoding of Report is the contract of `reprise diff --format json` and `reprise ci --json`
// (docs/diff.md documents it).
package casediff

// Schema names the version of the Report JSON. Later versions only add fields.
const Schema = "reprise.diff.v1"

// FindingType names what changed.
type FindingType string

const (
	RetrievalDrift     FindingType = "retrieval_drift"      // query, data source, document set or order changed; a retrieval added or removed
	ToolCallAdded      FindingType = "tool_call_added"      // B called a tool A did not
	ToolCallRemoved    FindingType = "tool_call_removed"    // A called a tool B did not
	ToolArgsChanged    FindingType = "tool_args_changed"    // same tool, other arguments (one finding per JSON leaf)
	ToolResultChanged  FindingType = "tool_result_changed"  // same call, other result or error
	ModelCallAdded     FindingType = "model_call_added"     // B made a model call A did not
	ModelCallRemoved   FindingType = "model_call_removed"   // A made a model call B did not
	PromptChanged      FindingType = "prompt_changed"       // system instructions or system/user/developer messages of a model call
	ModelConfigChanged FindingType = "model_config_changed" // model or sampling parameters of a model call
	ModelOutputChanged FindingType = "model_output_changed" // text, reasoning, refusal or finish reason a model call answered (secondary)
	RouteChanged       FindingType = "route_changed"        // the sequence of agents the run went through
	AnswerChanged      FindingType = "answer_changed"       // the final output
	UsageChanged       FindingType = "usage_changed"        // token counts (secondary)
	CostChanged        FindingType = "cost_changed"         // the run's cost of record or its cost_status (secondary)
	LatencyChanged     FindingType = "latency_changed"      // run duration (secondary)
)

// DecisionPoint groups finding types in the order a reader should look at them.
type DecisionPoint string

const (
	PointRetrieval DecisionPoint = "retrieval"
	PointTools     DecisionPoint = "tools"
	PointModel     DecisionPoint = "model"
	PointRoute     DecisionPoint = "route"
	PointAnswer    DecisionPoint = "answer"
	PointUsage     DecisionPoint = "usage"
	PointCost      DecisionPoint = "cost"
	PointLatency   DecisionPoint = "latency"
)

// Secondary reports whether a finding type is a secondary measure (usage, cost, latency) rather
// than a decision: by default such findings do not fail a case. A model call's output is one
// too: replay serves the recorded output, so it differs only where a live model answered
// (hybrid mode, two recorded runs) or where an API cannot carry part of it back (reasoning
// through Chat Completions), and what the agent decided on it is compared at the tools, route
// and answer points.
func (t FindingType) Secondary() bool {
	return t == UsageChanged || t == CostChanged || t == LatencyChanged || t == ModelOutputChanged
}

// Finding is one difference between case A and case B. PathA and PathB locate the value in each
// case's JSON (the dataset column names); one of them is empty when the value exists on one side
// only. Before is A's value, After is B's.
type Finding struct {
	Type          FindingType   `json:"type"`
	DecisionPoint DecisionPoint `json:"decision_point"`
	PathA         string        `json:"path_a,omitempty"`
	PathB         string        `json:"path_b,omitempty"`
	Before        any           `json:"before,omitempty"`
	After         any           `json:"after,omitempty"`
	Detail        string        `json:"detail,omitempty"`
}

// CaseRef names a compared case. MutationOf and Mutation are set for a case `reprise mutate`
// made: the original's id and the edit (its metadata), since such a case keeps the original's
// agent, status and times and would otherwise read as a recorded run.
type CaseRef struct {
	CaseID     string `json:"case_id"`
	AgentName  string `json:"agent_name,omitempty"`
	Status     string `json:"status"`
	MutationOf string `json:"mutation_of,omitempty"`
	Mutation   string `json:"mutation,omitempty"`
}

// Report is the whole comparison: findings ordered by decision point, then by position.
type Report struct {
	Schema   string              `json:"schema"`
	A        CaseRef             `json:"a"`
	B        CaseRef             `json:"b"`
	Findings []Finding           `json:"findings"`
	Counts   map[FindingType]int `json:"counts"`
}
