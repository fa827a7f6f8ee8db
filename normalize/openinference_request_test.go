package normalize

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// requestSeeds are request bodies as OpenInference records them in input.value and
// llm.invocation_parameters: the fixtures' JSON texts, and bodies the replay endpoint's parser
// refuses for each reason the generic checks report.
func requestSeeds(tb testing.TB) []string {
	return append(testfixtures.JSONTexts(tb),
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"temperature":0.2,"max_tokens":64,"seed":7}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"temperature":"hot"}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"max_tokens":5.5,"top_p":null}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"seed":1e999}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"n":2,"top_k":40,"frequency_penalty":0.5,"response_format":{"type":"json_schema","json_schema":{"name":"w"}}}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"response_format":"json","n":"two"}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"response_format":{"type":null}}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`+" \u00a0",
		`{"model":"gpt-4o","messages":"hi"}`, `{"model":"gpt-4o","messages":[{"role":"user","content":"cut`,
		`{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"f","parameters":"x"}}],"messages":[]}`,
		`{"temperature":0.5,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
		`[1,2]`, `{}`, `not json`, ``)
}

// referenceRequest is how input.value was read before its body was parsed once: a generic parse
// and its checks first, then the replay endpoint's parser on the same text.
func referenceRequest(a pcommon.Map, b *stepBuilder) OpenAIRequest {
	raw, ok := jsonAttr(a, "input.value", b)
	body, isObject := raw.(map[string]any)
	if !ok || getStr(a, "input.mime_type") != "application/json" || !isObject {
		return OpenAIRequest{}
	}
	b.checkRequestNumbers(body, "input.value")
	if v, _ := a.Get("input.value"); v.Type() == pcommon.ValueTypeStr {
		r, _ := parseChatRequest([]byte(v.Str()), true)
		return r
	}
	return ParseOpenAIRequest(body)
}

// The request read from input.value and the findings reported about it are those of the two
// parses, for any text, with and without a JSON mime type, and for the same body recorded as a
// structured value.
func FuzzOpenInferenceRequestParsedOnce(f *testing.F) {
	for _, s := range requestSeeds(f) {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, jsonMime bool) {
		for _, structured := range []bool{false, true} {
			a := pcommon.NewMap()
			a.PutStr("input.value", text)
			if structured {
				raw, err := parseJSON(text)
				if err != nil {
					continue
				}
				if a.PutEmpty("input.value").FromRaw(raw) != nil {
					continue
				}
			}
			if jsonMime {
				a.PutStr("input.mime_type", "application/json")
			}
			want, got, noTools := stepBuilder{spanID: "s"}, stepBuilder{spanID: "s"}, stepBuilder{spanID: "s"}
			wantRequest := referenceRequest(a, &want)
			gotRequest := openInferenceRequest(a, &got, true)
			require.Equal(t, wantRequest, gotRequest, "request from %q (structured %v)", text, structured)
			require.Equal(t, want.Findings, got.Findings, "findings for %q (structured %v)", text, structured)
			// Without its tools, the request is the same but for them.
			withoutTools := openInferenceRequest(a, &noTools, false)
			wantRequest.Tools = nil
			require.Equal(t, wantRequest, withoutTools, "request without tools from %q (structured %v)", text, structured)
			require.Equal(t, want.Findings, noTools.Findings, "findings without tools for %q (structured %v)", text, structured)
		}
	})
}

// Invocation parameters recorded as JSON text give the same model configuration parsed as
// recorded as parsed from an encoding of their decoded body, the way they were read before.
// Bodies with two names that match the same field are skipped: the API's parser matches names
// regardless of case, so the one it keeps depends on the order of the names, which the text
// keeps and the encoding (sorted by name) does not.
func FuzzInvocationParamsFromText(f *testing.F) {
	for _, s := range requestSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		raw, err := parseJSON(text)
		body, isObject := raw.(map[string]any)
		if err != nil || !isObject || namesCollide(body) {
			t.Skip()
		}
		params := func(recorded pcommon.Value) replaycase.ModelConfig {
			mc, _ := wireapi.ParseChatParams(recordedText(recorded, body))
			return mc
		}
		want := params(pcommon.NewValueEmpty()) // the encoding of the decoded body
		require.Equal(t, want, params(pcommon.NewValueStr(text)), "parameters from %q", text)
	})
}

// nameSeparators are left out when names are compared: a case-insensitive match may ignore them.
var nameSeparators = strings.NewReplacer("_", "", "-", "")

// namesCollide reports whether an object in v has two names a case-insensitive match could
// confuse.
func namesCollide(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		seen := make(map[string]bool, len(t))
		for k, e := range t {
			folded := strings.ToLower(nameSeparators.Replace(k))
			if seen[folded] || namesCollide(e) {
				return true
			}
			seen[folded] = true
		}
	case []any:
		for _, e := range t {
			if namesCollide(e) {
				return true
			}
		}
	}
	return false
}

// invocationParameters gives, from recorded text, the members openInferenceLLM reads of what
// jsonAttr decodes, and the same findings, for any text.
func FuzzInvocationParametersDecodedInPart(f *testing.F) {
	for _, s := range requestSeeds(f) {
		f.Add(s)
	}
	f.Add(`{"id":"resp_1","created_at":1,"temperature":"hot","tools":[{"a":[1,{"b":2}]}],"seed":3,"seed":4}`)
	f.Fuzz(func(t *testing.T, text string) {
		a := pcommon.NewMap()
		a.PutStr("llm.invocation_parameters", text)
		want, got := stepBuilder{spanID: "s"}, stepBuilder{spanID: "s"}
		raw, wantOK := jsonAttr(a, "llm.invocation_parameters", &want)
		whole, isObject := raw.(map[string]any)
		wantOK = wantOK && isObject
		params, gotOK := invocationParameters(a, &got)
		require.Equal(t, wantOK, gotOK, "decoded %q", text)
		require.Equal(t, want.Findings, got.Findings, "findings for %q", text)
		for _, name := range invocationParameterFields {
			require.Equal(t, whole[name], params[name], "%s of %q", name, text)
		}
	})
}

// An OpenInference model call that does not record llm.tools.N.tool.json_schema offers the
// tools its request body (input.value) lists: the same definitions.
func TestOpenInferenceToolsFromTheRequestBody(t *testing.T) {
	logs := testfixtures.Logs(t, testfixtures.OpenInference)
	recorded, _, _ := Build(testfixtures.Traces(t, testfixtures.OpenInference), logs)
	td := testfixtures.Traces(t, testfixtures.OpenInference)
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				span.Attributes().RemoveIf(func(k string, _ pcommon.Value) bool { return strings.HasPrefix(k, "llm.tools.") })
			}
		}
	}
	fromBody, _, _ := Build(td, logs)
	llmSteps := 0
	for i, st := range recorded.Steps {
		if st.Kind != replaycase.StepLLM {
			continue
		}
		llmSteps++
		require.NotEmpty(t, st.ToolDefinitions, "step %d", i)
		require.Equal(t, st.ToolDefinitions, fromBody.Steps[i].ToolDefinitions, "step %d", i)
	}
	require.Equal(t, 2, llmSteps)
}
