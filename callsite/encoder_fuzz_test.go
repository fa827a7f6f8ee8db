package callsite_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/callsite"
)

// The streaming encoder and the reference (Canonical, marshal, RFC 8785 transform) agree on
// any request: the fuzzer writes the whole request as JSON (model, system, messages with any
// parts, tools, every parameter), so message shapes, part kinds and parameters vary, not only
// the texts. And a request whose JSON tool arguments and tool_choice are re-spaced, re-ordered
// and re-spelled (numbers in their shortest form) keeps its ID, and so, in version 2, does one
// whose tool results sent as text-part arrays are re-spelled. The mask's low 20 bits choose the
// optional fields (the output format, every sampling parameter, the reasoning, tool and output
// settings and the failure mark of a tool result among them), its top bit
// adds the version marker (callsite.FieldV2); the request's Version1 reading varies too.
// Run: go test -run '^$' -fuzz FuzzEncodersAgreeOnAnyRequest ./callsite/
func FuzzEncodersAgreeOnAnyRequest(f *testing.F) {
	f.Add([]byte(`{"model":"gpt-4o-mini","system":[{"type":"text","content":"Be brief."}],"messages":[{"role":"user","parts":[{"type":"text","content":"Paris?"}]},
		{"role":"Assistant","name":"bot","parts":[{"type":"text"},{"type":"tool_call","id":"c1","name":"get_weather","arguments":" {\"city\":\"Paris\",\"n\":1e0}"}]},
		{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"14C"},{"type":"tool_call_response","id":"c2","is_error":true}]}],
		"tools":[{"name":"get_weather"},{"name":""}],"params":{"temperature":0.7,"top_p":-0,"max_tokens":9007199254740993,"seed":-1,"stop":["\n",""],"tool_choice":"{\"type\":\"function\"}",
		"frequency_penalty":-2,"presence_penalty":1e-9,"top_k":40,"choice_count":3,"output_type":"json","response_format":" {\"type\":\"json_schema\",\"json_schema\":{\"schema\":{\"b\":1,\"a\":2e0}}}",
		"reasoning_effort":"high","reasoning_summary":"auto","thinking":" {\"type\":\"enabled\",\"budget_tokens\":2048}",
		"parallel_tool_calls":false,"verbosity":"low","logit_bias":" {\"50256\":-100,\"1\":5e0}"}}`), uint32(0x800fffff))
	f.Add([]byte(`{"model":"\u00e9\ud83d\ude00\u2028","messages":[{"role":"USER","parts":[{"type":"uri","uri":"https://x","file_id":"f","content":"c"},{"type":"file","file_id":"f"},{"type":"blob","content":"\u0000"}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c"},{"type":"text","content":"t"}]}]}`), uint32(0x15))
	f.Add([]byte(`{"model":"m","messages":[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"[{\"type\":\"text\",\"text\":\"14C\"},{\"text\":\"\u00e9\",\"type\":\"input_text\",\"x\":1}]"}]}],
		"Version1":{"model":"m","messages":[{"role":"user","parts":[{"type":"text","content":"v1"}]}]}}`), uint32(0x80000001))
	f.Add([]byte(`{"messages":[{"role":"assistant","parts":[{"type":"tool_call","arguments":"{\"\u00e9\":1,\"\ufb00\":2,\"\ud83d\ude00\":{\"b\":[1.5e300,true,null]},\"a\":-0.0}"}]}],"params":{"tool_choice":"[1,2","choice_count":1,"output_type":"text","response_format":"{\"type\":\"text\"}","thinking":"{\"type\":\"disabled\"}"}}`), uint32(0x11f10))
	f.Fuzz(func(t *testing.T, body []byte, mask uint32) {
		var r callsite.Request
		if json.Unmarshal(body, &r) != nil {
			t.Skip()
		}
		var fields []string
		for i, name := range everyField {
			if mask&(1<<i) != 0 {
				fields = append(fields, name)
			}
		}
		v2 := mask&(1<<31) != 0
		if v2 {
			fields = append(fields, callsite.FieldV2)
		}
		for _, fs := range [][]string{fields, r.RecordedFields()} {
			want, canon := referenceID(t, r, fs)
			if !assert.Equal(t, string(canon), string(r.AppendCanonical(nil, fs)), "%q %v", body, fs) {
				return
			}
			assert.Equal(t, want, r.ID(fs))
		}

		// The same request, its JSON values written another way.
		respelled := r
		respelled.Messages = nil
		for _, m := range r.Messages {
			m.Parts = append(m.Parts[:0:0], m.Parts...)
			for i := range m.Parts {
				m.Parts[i].Arguments = respell(m.Parts[i].Arguments)
				if v2 && callsite.ToolResultText(m.Parts[i].Response) != m.Parts[i].Response {
					m.Parts[i].Response = respell(m.Parts[i].Response) // read as its text in version 2
				}
			}
			respelled.Messages = append(respelled.Messages, m)
		}
		respelled.Params.ToolChoice = respell(r.Params.ToolChoice)
		respelled.Params.ResponseFormat = respell(r.Params.ResponseFormat)
		respelled.Params.Thinking = respell(r.Params.Thinking)
		respelled.Params.LogitBias = respell(r.Params.LogitBias)
		assert.Equal(t, r.ID(fields), respelled.ID(fields), "%q", body)
	})
}

// respell writes JSON text (an object or an array) indented, its members sorted by bytes (not
// by UTF-16 units), its numbers in their shortest form; other text is returned as it is.
func respell(s string) string {
	t := strings.TrimSpace(s)
	var v any
	if t == "" || t[0] != '{' && t[0] != '[' || json.Unmarshal([]byte(t), &v) != nil {
		return s
	}
	b, err := json.MarshalIndent(v, " ", "\t")
	if err != nil {
		return s
	}
	return "\n" + string(b)
}
