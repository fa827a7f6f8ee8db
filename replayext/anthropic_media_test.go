package replayext

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	catPNG          = `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAE="}}`
	dogPNG          = `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAI="}}`
	catURL          = `{"type":"image","source":{"type":"url","url":"https://example.com/cat.png"}}`
	q3PDF           = `{"type":"document","source":{"type":"file","file_id":"file_011CNha8iCJcU1wXNR6q4V8w"},"title":"Q3"}`
	pictureQuestion = `{"type":"text","text":"What is in this picture?"}`
)

// mediaTurn is an Anthropic Messages request of one user turn made of the blocks given (JSON).
func mediaTurn(t *testing.T, blocks ...string) map[string]any {
	var content []any
	for _, b := range blocks {
		var block map[string]any
		require.NoError(t, json.Unmarshal([]byte(b), &block))
		content = append(content, block)
	}
	return map[string]any{"model": "claude-haiku-4-5", "max_tokens": 256, "messages": []any{map[string]any{"role": "user", "content": content}}}
}

// semconvMediaCall is an Anthropic call recorded in the GenAI conventions with the input parts
// given: OpenLLMetry's (blob, uri and file parts), or the Anthropic SDK's own spans, which write
// a part with only a type (anthropic_image) in place of an image.
func semconvMediaCall(parts, answer string) map[string]any {
	return map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-haiku-4-5",
		"gen_ai.request.max_tokens": int64(256),
		"gen_ai.input.messages":     `[{"role":"user","parts":` + parts + `}]`,
		"gen_ai.output.messages":    `[{"role":"assistant","parts":[{"type":"text","content":"` + answer + `"}],"finish_reason":"end_turn"}]`,
	}
}

// A Claude agent that sends images and documents replays: the request matches the recording of
// the same images (the request body OpenInference records, OpenLLMetry's parts) and misses one
// of other images or none. A recording that left the image out (the Anthropic SDK's own spans)
// matches no request, with the image or without it.
func TestAnthropicImagesAndDocumentsReplay(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil,
		agentRun(1, anthropicCallWithBody(t, mediaTurn(t, catPNG, pictureQuestion), "A cat.")),
		agentRun(2, semconvMediaCall(`[{"type":"blob","modality":"image","mime_type":"image/png","content":"iVBORw0KGgoAAAANSUhEUgAAAAE="},`+
			`{"type":"uri","modality":"image","uri":"https://example.com/cat.png"},{"type":"file","modality":"document","file_id":"file_011CNha8iCJcU1wXNR6q4V8w"},`+
			`{"type":"text","content":"What is in this picture?"}]`, "Two cats and a report.")),
		agentRun(3, semconvMediaCall(`[{"type":"anthropic_image"},{"type":"text","content":"What is in this picture?"}]`, "A cat, unseen.")))
	require.Len(t, cases, 3)
	s := startReplay(t, root, nil)
	for i, tc := range []struct {
		caseID string
		body   map[string]any
		answer string // "" for a miss
	}{
		{cases[0].CaseID, mediaTurn(t, catPNG, pictureQuestion), "A cat."},
		{cases[0].CaseID, mediaTurn(t, dogPNG, pictureQuestion), ""},
		{cases[0].CaseID, mediaTurn(t, pictureQuestion), ""},
		{cases[1].CaseID, mediaTurn(t, catPNG, catURL, q3PDF, pictureQuestion), "Two cats and a report."},
		{cases[1].CaseID, mediaTurn(t, catPNG, q3PDF, pictureQuestion), ""},
		{cases[2].CaseID, mediaTurn(t, catPNG, pictureQuestion), ""},
		{cases[2].CaseID, mediaTurn(t, pictureQuestion), ""},
	} {
		resp, body := s.do("POST", "/v1/cases/"+tc.caseID+"/anthropic/v1/messages", tc.body, map[string]string{headerSession: fmt.Sprintf("media-%d", i)})
		if tc.answer == "" {
			require.Equal(t, http.StatusNotFound, resp.StatusCode, "%d: %s", i, body)
			continue
		}
		require.Equal(t, http.StatusOK, resp.StatusCode, "%d: %s", i, body)
		assert.Equal(t, tc.answer, anthropicAnswer(t, body), "%d", i)
	}
}

// A block the replay cannot read is the API's 400, naming the field, not a miss.
func TestAnthropicUnreadableImageIsA400(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil, agentRun(1, anthropicCallWithBody(t, mediaTurn(t, catPNG, pictureQuestion), "A cat.")))
	s := startReplay(t, root, nil)
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/anthropic/v1/messages",
		mediaTurn(t, `{"type":"image","source":{"type":"base64","media_type":"image/png"}}`, pictureQuestion), nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "messages[0].content[0].source.data")
}

// anthropicAnswer is the text of a Messages answer of one text block.
func anthropicAnswer(t *testing.T, body []byte) string {
	var msg struct{ Content []struct{ Text string } }
	require.NoError(t, json.Unmarshal(body, &msg), string(body))
	require.Len(t, msg.Content, 1, string(body))
	return msg.Content[0].Text
}
