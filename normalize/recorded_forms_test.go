package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

func TestToolResultAsOneAnthropicTextBlockIsItsText(t *testing.T) {
	parts, err := semconvParts([]any{map[string]any{"type": "tool_call_response", "id": "toolu_1",
		"response": []any{map[string]any{"type": "text", "text": `{"sky":"overcast"}`}}}})
	assert.NoError(t, err)
	assert.Equal(t, `{"sky":"overcast"}`, parts[0].Response)
	// Anything else is kept as recorded.
	parts, err = semconvParts([]any{map[string]any{"type": "tool_call_response", "id": "toolu_1",
		"response": []any{map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "text", "text": "b"}}}})
	assert.NoError(t, err)
	assert.JSONEq(t, `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, parts[0].Response)
}

func TestToolCallPartsPreferTheCallID(t *testing.T) {
	parts, err := semconvParts([]any{map[string]any{"type": "tool_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"}})
	assert.NoError(t, err)
	assert.Equal(t, "call_1", parts[0].ID, "what results and tool spans refer to")
	parts, err = semconvParts([]any{map[string]any{"type": "tool_call", "id": "call_2", "name": "f"}})
	assert.NoError(t, err)
	assert.Equal(t, "call_2", parts[0].ID)
}

func TestPlainInstructions(t *testing.T) {
	a := pcommon.NewMap()
	a.PutStr("gen_ai.system_instructions", "You are a weather assistant.")
	assert.Equal(t, "You are a weather assistant.", plainInstructions(a))
	a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"x"}]`)
	assert.Empty(t, plainInstructions(a), "JSON goes to the parts parser")
	a.PutStr("gen_ai.system_instructions", `[{"type":"text"`)
	assert.Empty(t, plainInstructions(a), "malformed JSON is still reported by the parts parser")

	b := &stepBuilder{plainSystem: "Be brief."}
	b.Step.SystemInstructions = []replaycase.Part{{Type: "text", Content: "Be brief."}}
	b.setInput([]replaycase.Message{{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: "Be brief."}}}, {Role: "user"}})
	assert.Nil(t, b.Step.SystemInstructions, "recorded twice: kept once, in the input messages")
	b = &stepBuilder{plainSystem: "Be brief."}
	b.Step.SystemInstructions = []replaycase.Part{{Type: "text", Content: "Be brief."}}
	b.setInput([]replaycase.Message{{Role: "user"}})
	assert.Len(t, b.Step.SystemInstructions, 1)
}
