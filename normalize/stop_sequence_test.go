package normalize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/wireapi"
)

// A Claude answer that a stop sequence ended is recorded with stop_reason "stop_sequence" (in
// OpenInference's output.value and in the SDK's own span). The case keeps that reason, so the
// replay tells the agent what the API told it; made "stop", it replayed as end_turn. Through
// Chat Completions the same step ends with "stop", a value of that API.
func TestAnthropicStopSequenceIsKept(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "node", "anthropic-openinference-create", "traces.json"))
	require.NoError(t, err)
	require.Contains(t, string(b), "end_turn")
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(bytes.ReplaceAll(b, []byte("end_turn"), []byte("stop_sequence")))
	require.NoError(t, err)
	c, findings, _ := Build(td, plog.NewLogs())
	require.Empty(t, findings)

	var answered []int
	for i, st := range c.Steps {
		for _, m := range st.OutputMessages {
			if m.FinishReason == "stop_sequence" {
				answered = append(answered, i)
			}
		}
	}
	require.Len(t, answered, 1, "the final answer's step")
	st := &c.Steps[answered[0]]
	assert.Equal(t, []string{"stop_sequence"}, st.FinishReasons)

	var msg struct {
		StopReason string `json:"stop_reason"`
	}
	require.NoError(t, json.Unmarshal(wireapi.MessagesResponseJSON(st), &msg))
	assert.Equal(t, "stop_sequence", msg.StopReason)

	var chat struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(wireapi.ChatResponseJSON(st), &chat))
	require.Len(t, chat.Choices, 1)
	assert.Equal(t, "stop", chat.Choices[0].FinishReason)
}
