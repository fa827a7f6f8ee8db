package normalize

import (
	"github.com/reprise-dev/reprise/replaycase"
)

// summarize fills the case-level fields from the root agent span and the steps.
func summarize(c *replaycase.Case, root *normalized) {
	var firstLLM *replaycase.Step
	for i := range c.Steps {
		if c.Steps[i].Kind == replaycase.StepLLM {
			firstLLM = &c.Steps[i]
			break
		}
	}
	lastLLM := c.LastLLMStep()

	if root != nil {
		rs := &root.Step
		c.AgentName = rs.AgentName
		c.WorkflowName = rs.WorkflowName
		c.AgentInvocation = rs.AgentInvocation
		if root.ConversationID != "" {
			c.ConversationID = root.ConversationID
		}
		c.InputMessages = withSystem(rs.SystemInstructions, rs.InputMessages)
		if n := len(rs.OutputMessages); n > 0 {
			c.FinalOutput = &rs.OutputMessages[n-1]
		}
		c.ModelConfig = rs.ModelConfig
		c.ToolDefinitions = mergeTools(c.ToolDefinitions, rs.ToolDefinitions)
	}
	if c.AgentName == "" {
		for _, st := range c.Steps {
			if st.AgentName != "" {
				c.AgentName = st.AgentName
				break
			}
		}
	}
	if firstLLM != nil {
		if len(c.InputMessages) == 0 {
			c.InputMessages = withSystem(firstLLM.SystemInstructions, firstLLM.InputMessages)
		}
		provider := c.ModelConfig.Provider
		c.ModelConfig = firstLLM.ModelConfig
		setStr(&c.ModelConfig.Provider, provider)
	}
	if c.FinalOutput == nil && lastLLM != nil && len(lastLLM.OutputMessages) > 0 {
		c.FinalOutput = &lastLLM.OutputMessages[0]
	}

	for _, st := range c.Steps {
		switch st.Kind {
		case replaycase.StepLLM, replaycase.StepEmbedding:
			c.Usage.Add(st.Usage)
			c.ToolDefinitions = mergeTools(c.ToolDefinitions, st.ToolDefinitions)
		case replaycase.StepRetrieval:
			if st.Retrieval != nil {
				c.RetrievalRefs = append(c.RetrievalRefs, *st.Retrieval)
			}
		}
	}
	if c.Usage == (replaycase.Usage{}) && root != nil {
		c.Usage = root.Step.Usage
	}
	c.ToolCalls = toolCalls(c.Steps)
}

// withSystem puts separately recorded system instructions in front of the messages.
func withSystem(system []replaycase.Part, msgs []replaycase.Message) []replaycase.Message {
	if len(system) == 0 {
		return msgs
	}
	return append([]replaycase.Message{{Role: "system", Parts: system}}, msgs...)
}

func mergeTools(have, more []replaycase.ToolDefinition) []replaycase.ToolDefinition {
	for _, d := range more {
		dup := false
		for _, h := range have {
			dup = dup || h.Name == d.Name
		}
		if !dup {
			have = append(have, d)
		}
	}
	return have
}
