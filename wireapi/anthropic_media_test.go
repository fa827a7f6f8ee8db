package wireapi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// Image and document blocks become the parts the GenAI conventions name for them, as the
// OpenLLMetry Anthropic instrumentations record them: inline data a blob (its base64 text and
// media type), a URL a uri part, an uploaded file a file part, a plain-text document its text.
func TestParseMessagesRequestMedia(t *testing.T) {
	for block, want := range map[string]replaycase.Part{
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`:                   {Type: "blob", Modality: "image", MimeType: "image/png", Content: "iVBORw0KGgo="},
		`{"type":"image","source":{"type":"url","url":"https://example.com/cat.png"}}`:                                 {Type: "uri", Modality: "image", URI: "https://example.com/cat.png"},
		`{"type":"image","source":{"type":"file","file_id":"file_011"}}`:                                               {Type: "file", Modality: "image", FileID: "file_011"},
		`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0x"},"title":"Q3"}`: {Type: "blob", Modality: "document", MimeType: "application/pdf", Content: "JVBERi0x"},
		`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"Revenue rose."}}`:                {Type: "text", Content: "Revenue rose."},
		`{"type":"document","source":{"type":"url","url":"https://example.com/q3.pdf"}}`:                               {Type: "uri", Modality: "document", URI: "https://example.com/q3.pdf"},
		`{"type":"document","source":{"type":"file","file_id":"file_012"},"cache_control":{"type":"ephemeral"}}`:       {Type: "file", Modality: "document", FileID: "file_012"},
	} {
		r, err := ParseMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[` + block + `,{"type":"text","text":"Describe it."}]}]}`))
		require.NoError(t, err, block)
		assert.Equal(t, []replaycase.Message{{Role: "user", Parts: []replaycase.Part{want, {Type: "text", Content: "Describe it."}}}}, r.Messages, block)
	}
}

// A block whose source cannot be read is refused naming the field, as the API refuses it: read
// as no part, the image would be dropped and the request would match the one without it.
func TestParseMessagesRequestMediaNamesTheField(t *testing.T) {
	for block, param := range map[string]string{
		`{"type":"image"}`:                                                                       "messages[0].content[0].source",
		`{"type":"image","source":null}`:                                                         "messages[0].content[0].source",
		`{"type":"image","source":"https://example.com/cat.png"}`:                                "messages[0].content[0].source",
		`{"type":"image","source":{"type":"base64","data":"iVBO"}}`:                              "messages[0].content[0].source.media_type",
		`{"type":"image","source":{"type":"base64","media_type":"image/png"}}`:                   "messages[0].content[0].source.data",
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":1}}`:          "messages[0].content[0].source.data",
		`{"type":"image","source":{"type":"url","url":""}}`:                                      "messages[0].content[0].source.url",
		`{"type":"image","source":{"type":"file"}}`:                                              "messages[0].content[0].source.file_id",
		`{"type":"image","source":{"type":"text","data":"x"}}`:                                   "messages[0].content[0].source.type",
		`{"type":"image","source":{"url":"https://example.com/a"}}`:                              "messages[0].content[0].source.type",
		`{"type":"document","source":{"type":"bytes","data":"x"}}`:                               "messages[0].content[0].source.type",
		`{"type":"document","source":{"type":"text","media_type":"text/plain"}}`:                 "messages[0].content[0].source.data",
		`{"type":"document","source":{"type":"content","content":[{"type":"text","text":"x"}]}}`: "messages[0].content[0].source.type",
	} {
		_, err := ParseMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[` + block + `]}]}`))
		var re *RequestError
		require.True(t, errors.As(err, &re), block)
		assert.Equal(t, param, re.Param, block)
	}
}

// An image or document inside a tool_result (a screenshot a tool returned) is read as a
// top-level one is, into a part of the result's tool message beside the result's text: read
// as a refusal it made every such request a 400, and dropped it would let a request match the
// recording of another image.
func TestParseMessagesRequestToolResultMedia(t *testing.T) {
	r, err := ParseMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[` +
		`{"type":"text","text":"Screenshot taken."},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
		`{"type":"document","source":{"type":"url","url":"https://example.com/q3.pdf"}}]}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, []replaycase.Message{{Role: "tool", Parts: []replaycase.Part{
		{Type: "tool_call_response", ID: "toolu_1", Response: "Screenshot taken."},
		{Type: "blob", Modality: "image", MimeType: "image/png", Content: "iVBORw0KGgo="},
		{Type: "uri", Modality: "document", URI: "https://example.com/q3.pdf"},
	}}}, r.Messages)

	for block, param := range map[string]string{
		`{"type":"image","source":{"type":"base64","media_type":"image/png"}}`: "messages[0].content[0].content[0].source.data",
		`{"type":"search_result","source":"https://example.com"}`:              "messages[0].content[0].content[0].type",
	} {
		_, err := ParseMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[` + block + `]}]}]}`))
		var re *RequestError
		require.True(t, errors.As(err, &re), block)
		assert.Equal(t, param, re.Param, block)
	}
}
