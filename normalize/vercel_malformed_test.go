package normalize

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

// A message or a part of ai.prompt.messages that is not a JSON object cannot be read: it is
// left out, and the step says so (unparseable_content), so that a prompt short of it is not
// replayed as the one sent. What can be read is still read.
func TestVercelEntriesThatAreNotObjectsAreReported(t *testing.T) {
	asRecorded, _, _ := Build(recordedRun(t, "node", "vercel-anthropic-generate"))
	td, ld := recordedRun(t, "node", "vercel-anthropic-generate")
	edited := 0
	eachSpan(td, func(sp ptrace.Span) {
		v, ok := sp.Attributes().Get("ai.prompt.messages")
		if !ok {
			return
		}
		var msgs []any
		require.NoError(t, json.Unmarshal([]byte(v.Str()), &msgs))
		msgs = append(msgs, 42) // a message that is no object
		for _, m := range msgs {
			if parts, ok := m.(map[string]any)["content"].([]any); ok {
				m.(map[string]any)["content"] = append(parts, "a part that is no object")
				break
			}
		}
		raw, err := json.Marshal(msgs)
		require.NoError(t, err)
		sp.Attributes().PutStr("ai.prompt.messages", string(raw))
		edited++
	})
	require.Positive(t, edited)
	c, findings, _ := Build(td, ld)
	var reported []string
	for _, r := range findings {
		if r.Code == replaycase.ReasonUnparseableContent && strings.Contains(r.Detail, "ai.prompt.messages") {
			reported = append(reported, r.Detail)
		}
	}
	require.NotEmpty(t, reported, "findings: %+v", findings)
	assert.Contains(t, reported[0], "not a JSON object")
	assert.Equal(t, lastModelCall(t, asRecorded).InputMessages, lastModelCall(t, c).InputMessages, "what can be read is read as before")
}
