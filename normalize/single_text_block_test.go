package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
