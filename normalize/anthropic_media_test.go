package normalize

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/wireapi"
)

// An image or document block that an instrumentation writes into gen_ai.input.messages as the
// Anthropic block itself (the Python OpenLLMetry instrumentation for every document and image
// file, the JS one for an image file) is read as the live request's block is, so the recording
// and the replayed request get the same parts; one whose source cannot be read stays whole.
func TestSemconvPartsReadAnthropicBlocks(t *testing.T) {
	for _, block := range []string{
		`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0x"},"title":"Q3"}`,
		`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"Revenue rose."}}`,
		`{"type":"document","source":{"type":"url","url":"https://example.com/q3.pdf"}}`,
		`{"type":"document","source":{"type":"file","file_id":"file_012"}}`,
		`{"type":"image","source":{"type":"file","file_id":"file_011"}}`,
	} {
		live, err := wireapi.ParseMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[` + block + `]}]}`))
		require.NoError(t, err, block)
		var recorded any
		require.NoError(t, json.Unmarshal([]byte(`[`+block+`]`), &recorded))
		parts, err := semconvParts(recorded)
		require.NoError(t, err, block)
		assert.Equal(t, live.Messages[0].Parts, parts, block)
	}
	const unreadable = `{"type":"document","source":{"type":"content","content":[{"type":"text","text":"x"}]}}`
	var recorded any
	require.NoError(t, json.Unmarshal([]byte(`[`+unreadable+`]`), &recorded))
	parts, err := semconvParts(recorded)
	require.NoError(t, err)
	require.Len(t, parts, 1)
	assert.Equal(t, "document", parts[0].Type)
	assert.JSONEq(t, unreadable, parts[0].Content)
}

// The Vercel AI SDK records an image or file sent inline as its base64 text (ai.prompt.messages
// data), which @ai-sdk/anthropic sends as a base64 source: the recording is the blob the live
// request's block is. One sent by URL stays a uri part.
func TestVercelInlineFileIsABlob(t *testing.T) {
	var recorded any
	require.NoError(t, json.Unmarshal([]byte(`[{"role":"user","content":[
		{"type":"file","mediaType":"image/png","data":"iVBORw0KGgo="},
		{"type":"file","mediaType":"application/pdf","data":"https://example.com/q3.pdf"}]}]`), &recorded))
	msgs, err := vercelMessages(recorded, nil)
	require.NoError(t, err)
	live, err := wireapi.ParseMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[
		{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
		{"type":"document","source":{"type":"url","url":"https://example.com/q3.pdf"}}]}]}`))
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Len(t, msgs[0].Parts, 2)
	for i, want := range live.Messages[0].Parts { // the members the call-site id reads
		got := msgs[0].Parts[i]
		assert.Equal(t, [3]string{want.Type, want.Content, want.URI}, [3]string{got.Type, got.Content, got.URI}, i)
	}
	assert.Equal(t, "image/png", msgs[0].Parts[0].MimeType)
}
