package wireapi

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// fuzzMarker stands for personal data in a request body: no error may quote it.
const fuzzMarker = "PRIVATE-555-0100"

// No body makes a parser panic, and every refusal is a *RequestError that names its field by a
// path of the body's own keys, is short, and never quotes the body.
// Run: go test -run '^$' -fuzz FuzzParsersRefuseWithANamedField ./wireapi/
func FuzzParsersRefuseWithANamedField(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"` + fuzzMarker + `"}],"stop":["` + fuzzMarker + `",null],"seed":9007199254740993}`))
	f.Add([]byte(`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"` + fuzzMarker + `"}]},{"type":"item_reference","id":"fc_` + fuzzMarker + `"}],"previous_response_id":"` + fuzzMarker + `"}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"system":[{"type":"text","text":"` + fuzzMarker + `"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}]}]}]}`))
	f.Add([]byte(`{"model":"m","input":["` + fuzzMarker + `",null],"encoding_format":"` + fuzzMarker + `"}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":[[[[[[[[1]]]]]]]]}}]}]}`))
	f.Add(append([]byte(`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":`), []byte(strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`}}]}]}`)...))
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(err error) {
			if err == nil {
				return
			}
			var re *RequestError
			require.True(t, errors.As(err, &re), "%T %v", err, err)
			assert.NotEmpty(t, re.Code)
			assert.Less(t, len(re.Message), 200)
			assert.NotContains(t, re.Message, fuzzMarker)
			assert.NotContains(t, re.Param, fuzzMarker)
		}
		_, err := ParseChatRequest(body)
		check(err)
		_, err = ParseChatParams(body)
		check(err)
		_, err = ParseMessagesRequest(body)
		check(err)
		_, err = ParseEmbeddingsRequest(body)
		check(err)
		r, err := ParseResponsesRequest(body)
		check(err)
		if err == nil {
			_, err = r.Resolve(func(string, bool) *replaycase.Step { return nil })
			check(err)
		}
	})
}

// What a replayed response says is what was recorded: the text and each tool call's id, name and
// arguments read back the same from the JSON body and from the stream (deltas put together), for
// Chat Completions, Responses and, for JSON object arguments, Anthropic Messages.
// Run: go test -run '^$' -fuzz FuzzWrittenResponsesReadBack ./wireapi/
func FuzzWrittenResponsesReadBack(f *testing.F) {
	f.Add("It is mild.", "c1", "get_weather", `{"city":"Paris"}`)
	f.Add("é😀\u2028<&>\x00\xff", "toolu_\"1", "f\n", "{\"a\":\n[1e400, -0, \"\\ud800\"]}")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, text, id, name, args string) {
		st := &replaycase.Step{CallSiteID: "cs_1", StartTime: time.Unix(1764460800, 0), ModelConfig: replaycase.ModelConfig{RequestModel: "m"},
			OutputMessages: []replaycase.Message{{Role: "assistant", FinishReason: "tool_call", Parts: []replaycase.Part{{Type: "text", Content: text}, {Type: "tool_call", ID: id, Name: name, Arguments: args}}}}}
		wantText, wantID, wantName, wantArgs := asJSON(text), asJSON(id), asJSON(name), asJSON(args)

		// Chat Completions.
		var chat struct {
			Choices []struct {
				Message struct {
					Content   string
					ToolCalls []struct {
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		require.NoError(t, json.Unmarshal(ChatResponseJSON(st), &chat))
		m := chat.Choices[0].Message
		assert.Equal(t, []string{wantText, wantID, wantName, wantArgs}, []string{m.Content, m.ToolCalls[0].ID, m.ToolCalls[0].Function.Name, m.ToolCalls[0].Function.Arguments}, "chat")
		var content, callID, callName, callArgs string
		for _, data := range sseData(t, func(w *httptest.ResponseRecorder) { WriteChatResponse(w, &ChatRequest{Stream: true}, st) }) {
			if data == "[DONE]" {
				continue
			}
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content   string
						ToolCalls []struct {
							ID       string
							Function struct{ Name, Arguments string }
						} `json:"tool_calls"`
					}
				}
			}
			require.NoError(t, json.Unmarshal([]byte(data), &chunk), data)
			for _, c := range chunk.Choices {
				content += c.Delta.Content
				for _, tc := range c.Delta.ToolCalls {
					callID, callName, callArgs = callID+tc.ID, callName+tc.Function.Name, callArgs+tc.Function.Arguments
				}
			}
		}
		assert.Equal(t, []string{wantText, wantID, wantName, wantArgs}, []string{content, callID, callName, callArgs}, "chat stream")

		// Responses.
		req := &ResponsesRequest{}
		var resp struct {
			Output []struct {
				Type            string
				Content         []struct{ Text string }
				CallID          string `json:"call_id"`
				Name, Arguments string
			}
		}
		require.NoError(t, json.Unmarshal(ResponsesResponseJSON(req, st), &resp))
		require.Len(t, resp.Output, 2)
		assert.Equal(t, []string{wantText, wantID, wantName, wantArgs}, []string{resp.Output[0].Content[0].Text, resp.Output[1].CallID, resp.Output[1].Name, resp.Output[1].Arguments}, "responses")
		content, callArgs = "", ""
		req.Stream = true
		for _, data := range sseData(t, func(w *httptest.ResponseRecorder) { WriteResponsesResponse(w, req, st) }) {
			var ev struct{ Type, Delta string }
			require.NoError(t, json.Unmarshal([]byte(data), &ev), data)
			switch ev.Type {
			case "response.output_text.delta":
				content += ev.Delta
			case "response.function_call_arguments.delta":
				callArgs += ev.Delta
			}
		}
		assert.Equal(t, []string{wantText, wantArgs}, []string{content, callArgs}, "responses stream")

		// Anthropic Messages: input is an object, so only object arguments read back.
		var obj map[string]any
		if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			return
		}
		var msg struct {
			Content []struct {
				Text, ID, Name string
				Input          json.RawMessage
			}
		}
		require.NoError(t, json.Unmarshal(MessagesResponseJSON(st), &msg))
		assert.Equal(t, []string{wantText, wantID, wantName}, []string{msg.Content[0].Text, msg.Content[1].ID, msg.Content[1].Name}, "messages")
		assert.JSONEq(t, args, string(msg.Content[1].Input))
		content, callArgs = "", ""
		for _, data := range sseData(t, func(w *httptest.ResponseRecorder) { WriteMessagesResponse(w, &MessagesRequest{Stream: true}, st) }) {
			var ev struct {
				Delta struct {
					Text        string
					PartialJSON string `json:"partial_json"`
				}
			}
			require.NoError(t, json.Unmarshal([]byte(data), &ev), data)
			content, callArgs = content+ev.Delta.Text, callArgs+ev.Delta.PartialJSON
		}
		assert.Equal(t, wantText, content, "messages stream")
		assert.JSONEq(t, args, callArgs, "messages stream")
	})
}

// asJSON is s as a JSON reader reads it back (invalid UTF-8 becomes U+FFFD).
func asJSON(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

// sseData is the data of every event a writer streams, each event ended by a blank line.
func sseData(t *testing.T, write func(*httptest.ResponseRecorder)) []string {
	w := httptest.NewRecorder()
	write(w)
	body := w.Body.String()
	require.True(t, strings.HasSuffix(body, "\n\n"), "the stream ends with a complete event")
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		var data []string
		for _, line := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, d)
			} else {
				require.True(t, strings.HasPrefix(line, "event: "), "%q", line)
			}
		}
		require.Len(t, data, 1, "%q", ev)
		out = append(out, data[0])
	}
	return out
}
