package wireapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// A step whose telemetry recorded the Responses item ids answers with them, and an
// item_reference that quotes one resolves to the recorded call; without recorded ids the
// derived ones (fc_<call id>, msg_<response id>_<n>) are used.
func TestResponsesRecordedItemIDs(t *testing.T) {
	st := &replaycase.Step{Kind: replaycase.StepLLM, ResponseID: "resp_1", OutputMessages: []replaycase.Message{
		{Role: "assistant", Parts: []replaycase.Part{{Type: "output_text", Content: "Checking.", ItemID: "msg_abc"}}},
		{Role: "assistant", Parts: []replaycase.Part{
			{Type: "tool_call", ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, ItemID: "fc_abc"},
			{Type: "tool_call", ID: "call_2", Name: "get_weather", Arguments: `{"city":"Lyon"}`}}}}}
	var ids []string
	for _, it := range responseItems(st) {
		ids = append(ids, it.Type+" "+it.ID+" "+it.CallID)
	}
	assert.Equal(t, []string{"message msg_abc ", "function_call fc_abc call_1", "function_call fc_call_2 call_2"}, ids)

	recorded := func(key string, byCall bool) *replaycase.Step {
		if byCall && (key == "fc_abc" || key == "call_2") {
			return st
		}
		return nil
	}
	r, err := ParseResponsesRequest([]byte(`{"model":"m","input":[{"role":"user","content":"Paris?"},{"type":"item_reference","id":"fc_abc"},{"type":"item_reference","id":"fc_call_2"}]}`))
	require.NoError(t, err)
	got, err := r.Resolve(recorded)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"call_1", "call_2"}, []string{got[1].Parts[0].ID, got[2].Parts[0].ID})
	assert.Equal(t, `{"city":"Paris"}`, got[1].Parts[0].Arguments)
}
