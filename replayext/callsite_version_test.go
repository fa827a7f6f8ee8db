package replayext

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// Call-site id version 2 (docs/call-site-id.md): recordings of legacy function calling and of
// tool results sent as text parts match their live requests, and the version-1 ids of older
// datasets still match theirs.

// agentRun is one recorded agent run: an invoke_agent root span and, under it, one span per
// model call with the attributes given (as an instrumentation sets them).
func agentRun(n byte, calls ...map[string]any) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "weather-bot")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	tid := pcommon.TraceID{0xca, 0x11, n, 15: 0x5e}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	root := spans.AppendEmpty()
	root.SetName("invoke_agent weather-bot")
	root.SetTraceID(tid)
	root.SetSpanID(pcommon.SpanID{n, 1})
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(len(calls)+1) * time.Second)))
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	root.Attributes().PutStr("gen_ai.agent.name", "weather-bot")
	for i, attrs := range calls {
		sp := spans.AppendEmpty()
		sp.SetName("chat")
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID{n, byte(2 + i)})
		sp.SetParentSpanID(root.SpanID())
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Second)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i)*time.Second + 500*time.Millisecond)))
		if err := sp.Attributes().FromRaw(attrs); err != nil {
			panic(err)
		}
	}
	return td
}

// writeRuns runs the traces through the processor and the exporter into root; rewrite, when
// not nil, changes each case before it is written.
func writeRuns(t *testing.T, root string, rewrite func(*replaycase.Case), traces ...ptrace.Traces) []*replaycase.Case {
	exp := testdataset.Writer(t, root, "zstd")
	next := consumer.Traces(exp)
	if rewrite != nil {
		var err error
		next, err = consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
			cs, err := replaycase.Decode(td)
			if err != nil {
				return err
			}
			out := ptrace.NewTraces()
			for _, c := range cs {
				rewrite(c)
				if err := replaycase.Encode(c, out); err != nil {
					return err
				}
			}
			return exp.ConsumeTraces(ctx, out)
		})
		require.NoError(t, err)
	}
	runs := make([]string, len(traces))
	for i := range runs {
		runs[i] = testfixtures.OpenInference // a run without log events
	}
	cases := testpipeline.RunTraces(t, next, runs, traces)
	require.NoError(t, exp.Shutdown(context.Background()))
	return cases
}

// legacyBody is a Chat Completions request of legacy function calling, as the openai SDK sends
// it (functions offered, the assistant's function_call, its result in a function message),
// whose function call asks for city: the body callsite/testdata/version1 pins the version-1 id
// of, for Paris. The question is the same whatever the city (the model may call again with
// other arguments), so two bodies differ only in the call's arguments.
func legacyBody(t *testing.T, city string) map[string]any {
	raw, err := os.ReadFile("../callsite/testdata/version1/chat-legacy-functions.json")
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(string(raw), `{\"city\":\"Paris\"}`, `{\"city\":\"`+city+`\"}`)), &body))
	return body
}

// legacyCall is the OpenInference LLM span of legacyBody(t, city) answered with answer: the body
// in input.value, and, when flattened, the messages as llm.input_messages (the function call as
// message.function_call_name, as the Python instrumentation writes them).
func legacyCall(t *testing.T, city, answer string, flattened bool) map[string]any {
	body, err := json.Marshal(legacyBody(t, city))
	require.NoError(t, err)
	out, err := json.Marshal(map[string]any{"id": "chatcmpl-" + city, "object": "chat.completion", "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}}})
	require.NoError(t, err)
	a := map[string]any{
		"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "gpt-4o-mini",
		"input.value": string(body), "input.mime_type": "application/json",
		"output.value": string(out), "output.mime_type": "application/json",
		"llm.invocation_parameters":                                 `{"model":"gpt-4o-mini","temperature":0,"function_call":"auto"}`,
		"llm.output_messages.0.message.role":                        "assistant",
		"llm.output_messages.0.message.content":                     answer,
		"llm.token_count.prompt":                                    int64(60),
		"llm.token_count.completion":                                int64(8),
		"llm.token_count.total":                                     int64(68),
		"llm.finish_reason":                                         "stop",
		"llm.input_messages.0.message.role":                         "system",
		"llm.input_messages.0.message.content":                      "You are a weather bot.",
		"llm.input_messages.1.message.role":                         "user",
		"llm.input_messages.1.message.content":                      "What is the weather in Paris today?",
		"llm.input_messages.2.message.role":                         "assistant",
		"llm.input_messages.2.message.function_call_name":           "get_weather",
		"llm.input_messages.2.message.function_call_arguments_json": `{"city":"` + city + `"}`,
		"llm.input_messages.3.message.role":                         "function",
		"llm.input_messages.3.message.name":                         "get_weather",
		"llm.input_messages.3.message.content":                      `{"temp_c":14}`,
	}
	if !flattened {
		for k := range a {
			if len(k) > 19 && k[:19] == "llm.input_messages." {
				delete(a, k)
			}
		}
	}
	return a
}

// chatAnswer is the text of a chat.completion answer.
func chatAnswer(t *testing.T, body []byte) string {
	var c struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	require.NoError(t, json.Unmarshal(body, &c), string(body))
	require.Len(t, c.Choices, 1, string(body))
	return c.Choices[0].Message.Content
}

// Two live legacy function-calling requests that differ only in the call's arguments are each
// answered with their own recording, whether OpenInference recorded the messages flattened
// (the call as message.function_call_name) or only the request body.
func TestCallsiteVersionLegacyFunctionCallsAnsweredByTheirOwnRecording(t *testing.T) {
	for _, flattened := range []bool{true, false} {
		t.Run(map[bool]string{true: "flattened messages", false: "request body only"}[flattened], func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "data")
			cases := writeRuns(t, root, nil,
				agentRun(1, legacyCall(t, "Paris", "It is 14C in Paris.", flattened)),
				agentRun(2, legacyCall(t, "Lyon", "It is 14C in Lyon.", flattened)))
			require.Len(t, cases, 2)
			for _, c := range cases {
				st := c.Steps[len(c.Steps)-1]
				require.Equal(t, replaycase.StepLLM, st.Kind)
				assert.Contains(t, st.CallSiteFields, callsite.FieldV2, "a new recording lists the marker")
			}
			s := startReplay(t, root, nil)
			// Unscoped, so that every recording is a candidate, and each request in a session of
			// its own, so that a session's cursor cannot hand out the recordings in turn.
			for i, city := range []string{"Lyon", "Paris", "Lyon", "Paris"} {
				session := map[string]string{"X-Replay-Session": fmt.Sprintf("s%d", i)}
				resp, body := s.do("POST", "/openai/v1/chat/completions", legacyBody(t, city), session)
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", city, body)
				assert.Equal(t, "It is 14C in "+city+".", chatAnswer(t, body), city)
			}
		})
	}
}

// A tool result sent as an array of text parts matches a recording whose step stores the text:
// the GenAI semconv adapter reads a single text block as its text.
func TestCallsiteVersionToolResultPartsMatchARecordingOfTheText(t *testing.T) {
	input := `[{"role":"user","parts":[{"type":"text","content":"What is the weather in Paris today?"}]},` +
		`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}]},` +
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":[{"type":"text","text":"14C"}]}]}]`
	call := map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
		"gen_ai.input.messages":  input,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"It is 14C in Paris."}],"finish_reason":"stop"}]`,
	}
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil, agentRun(1, call))
	require.Len(t, cases, 1)
	st := cases[0].Steps[len(cases[0].Steps)-1]
	require.Equal(t, "14C", st.InputMessages[2].Parts[0].Response, "the step stores the text")
	s := startReplay(t, root, nil)

	chat := map[string]any{"model": "gpt-4o-mini", "messages": []any{
		map[string]any{"role": "user", "content": "What is the weather in Paris today?"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city": "Paris"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": []any{map[string]any{"type": "text", "text": "14C"}}},
	}}
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", chat, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "It is 14C in Paris.", chatAnswer(t, body))

	responses := map[string]any{"model": "gpt-4o-mini", "input": []any{
		map[string]any{"role": "user", "content": "What is the weather in Paris today?"},
		map[string]any{"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": `{"city":"Paris"}`},
		map[string]any{"type": "function_call_output", "call_id": "call_1", "output": []any{map[string]any{"type": "input_text", "text": "14C"}}},
	}}
	resp, body = s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/responses", responses, map[string]string{"X-Replay-Session": "responses"})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, string(body), "It is 14C in Paris.")
}

// version1IDs are the call-site ids the code before version 2 computed for the fixture runs'
// model calls (their steps' call_site_id then), by service and step index, with the fields each
// covered.
var version1IDs = map[string][2]string{
	"holdout-agent-otel/1":          {"cs_466df155938b09666b600f990bb72f6e", "max_tokens,temperature"},
	"holdout-agent-otel/3":          {"cs_165e6747daa2b4a1baf642c0e4df66bc", "max_tokens,temperature"},
	"holdout-agent-traceloop/1":     {"cs_424767eb951e3ecf75ca073c2a64c3a6", "max_tokens,temperature,tools"},
	"holdout-agent-traceloop/3":     {"cs_8f5edb7d718e833c13352f01c4a7062a", "max_tokens,temperature,tools"},
	"holdout-agent-openinference/1": {"cs_341c0bfdb6a77db336e56a021e471186", "max_tokens,seed,temperature,tools"},
	"holdout-agent-openinference/3": {"cs_944407c82e6311ce1dee89fc69020ef1", "max_tokens,seed,temperature,tools"},
	// legacyBody(t, "Paris") recorded from its body alone, over all seven fields: version 1 did
	// not read the function call.
	"weather-bot/0": {"cs_215d7527655c1ef59dfc4004427746bd", "max_tokens,seed,stop,temperature,tool_choice,tools,top_p"},
}

// Version-1 recordings (field sets without the marker, the ids the old code stored) still
// match their live requests: the SDK's requests of the fixture runs, and a legacy
// function-calling request.
func TestCallsiteVersion1RecordingsStillMatch(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	var traces []ptrace.Traces
	for i, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference} {
		td := testfixtures.Traces(t, run)
		testfixtures.WithTraceID(td, testfixtures.Logs(t, run), i)
		traces = append(traces, td)
	}
	traces = append(traces, agentRun(9, legacyCall(t, "Paris", "It is 14C in Paris.", false)))
	// What a dataset written before version 2 holds: each model call's version-1 id and fields.
	asVersion1 := func(c *replaycase.Case) {
		for i := range c.Steps {
			if c.Steps[i].Kind != replaycase.StepLLM {
				continue
			}
			v1, ok := version1IDs[fmt.Sprintf("%s/%d", c.Provenance.ServiceName, i)]
			require.True(t, ok, "%s step %d", c.Provenance.ServiceName, i)
			c.Steps[i].CallSiteID, c.Steps[i].CallSiteFields = v1[0], strings.Split(v1[1], ",")
		}
	}
	cases := writeRuns(t, root, asVersion1, traces...)
	require.Len(t, cases, 4)
	s := startReplay(t, root, nil)

	sdk := sdkRequests(t)
	for _, c := range cases {
		header := map[string]string{"X-Replay-Session": c.CaseID}
		path := "/v1/cases/" + c.CaseID + "/openai/v1/chat/completions"
		if c.Provenance.ServiceName == "weather-bot" {
			resp, body := s.do("POST", path, legacyBody(t, "Paris"), header)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			assert.Equal(t, version1IDs["weather-bot/0"][0], resp.Header.Get("X-Replay-Call-Site-Id"))
			assert.Equal(t, "It is 14C in Paris.", chatAnswer(t, body))
			continue
		}
		for i, req := range sdk {
			resp, body := s.do("POST", path, req, header)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s call %d: %s", c.Provenance.ServiceName, i, body)
			want := version1IDs[fmt.Sprintf("%s/%d", c.Provenance.ServiceName, 1+2*i)][0]
			assert.Equal(t, want, resp.Header.Get("X-Replay-Call-Site-Id"), "%s call %d", c.Provenance.ServiceName, i)
		}
	}
}
