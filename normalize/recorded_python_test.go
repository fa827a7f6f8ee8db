package normalize

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// openinference-instrumentation-anthropic 3.1 (Python) writes each tool_use block twice, as
// message.contents.N.tool_call.* and as message.tool_calls.N.tool_call.*: one tool_call part
// per block, with the tool_use id, and nothing is missing.
func TestPythonAnthropicToolUseBlocksAreOneToolCallEach(t *testing.T) {
	c, findings, _ := Build(recordedRun(t, "python", "anthropic-openinference"))
	require.Empty(t, findings)
	var calls []string
	for _, st := range c.Steps {
		if st.Kind != replaycase.StepLLM {
			continue
		}
		require.Equal(t, replaycase.APIAnthropicMessages, st.API)
		for _, m := range st.OutputMessages {
			for _, p := range m.Parts {
				if p.Type == "tool_call" {
					calls = append(calls, p.ID+" "+p.Name+" "+p.Arguments)
				}
			}
		}
	}
	require.Equal(t, []string{`toolu_1_0 get_weather {"city": "Paris"}`, `toolu_1_1 get_weather {"city": "Lyon"}`}, calls)
}

// openinference-instrumentation-openai-agents 2.6 records, as llm.invocation_parameters, the
// settings the Responses API echoed in its response (id, created_at, the dated model that
// answered, default top_p and tool_choice), and as input.value only the input items: the model
// and parameters the Agents SDK requested are nowhere in the trace. No request could be
// matched against such a recording, so each model call is reported (the parseable_content
// evidence check, which quarantines by default).
func TestPythonAgentsSDKResponseEchoIsNotTheRequest(t *testing.T) {
	c, findings, _ := Build(recordedRun(t, "python", "agents-sdk-openinference-agents"))
	var spans []string
	for _, f := range findings {
		require.Equal(t, replaycase.ReasonUnparseableContent, f.Code)
		require.Contains(t, f.Detail, "llm.invocation_parameters: holds the parameters of response")
		require.Contains(t, f.Detail, "the requested model and sampling parameters were not recorded")
		spans = append(spans, f.SpanID)
	}
	var llm []string
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			llm = append(llm, st.SpanID)
			require.Nil(t, st.ModelConfig.TopP, "the echoed default is not taken for a request parameter")
		}
	}
	require.Len(t, llm, 2)
	require.Equal(t, llm, spans, "one finding per model call")
}

// The Agents SDK under openinference-instrumentation-openai-agents and
// openinference-instrumentation-openai together: each model call is the agents' "response"
// span (the response's echo of the parameters) wrapping the client's "Response" span (the
// request body). One model step per call, the client's, and nothing is missing.
func TestPythonAgentsSDKWrappedClientCallIsOneModelStep(t *testing.T) {
	c, findings, _ := Build(recordedRun(t, "python", "agents-sdk-openinference-agents-and-openai"))
	require.Empty(t, findings)
	var llm []string
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			llm = append(llm, st.Name+" "+st.ResponseID+" "+st.API+" "+st.ModelConfig.RequestModel)
		}
	}
	require.Equal(t, []string{"Response resp_1 openai.responses gpt-4.1-mini", "Response resp_2 openai.responses gpt-4.1-mini"}, llm)
	require.Len(t, c.ToolCalls, 2)
	for _, call := range c.ToolCalls {
		require.NotEmpty(t, call.Result, call.ID)
	}
}
