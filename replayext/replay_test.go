package replayext

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/replayext/internal/metadata"
	"github.com/reprise-dev/reprise/replayext/internal/metadatatest"
)

// writeDataset runs fixture runs (each copy with its own trace id) through the processor and
// the exporter into root.
func writeDataset(t testing.TB, root string, runs ...string) []*replaycase.Case {
	exp := testdataset.Writer(t, root, "zstd")
	var traces []ptrace.Traces
	for i, run := range runs {
		td := testfixtures.Traces(t, run)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		traces = append(traces, td)
	}
	cases := testpipeline.RunTraces(t, exp, runs, traces)
	require.NoError(t, exp.Shutdown(context.Background()))
	return cases
}

type server struct {
	t    testing.TB
	base string
	ext  *replay
}

func startReplay(t testing.TB, root string, mutate func(*Config)) *server {
	return startReplayWith(t, root, mutate, extensiontest.NewNopSettings(metadata.Type), componenttest.NewNopHost())
}

func startReplayWith(t testing.TB, root string, mutate func(*Config), set extension.Settings, host component.Host) *server {
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = root
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.RefreshInterval = 100 * time.Millisecond
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(t, cfg.Validate())
	ext, err := NewFactory().Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	r := ext.(*replay)
	return &server{t: t, base: "http://" + r.addr.String(), ext: r}
}

func (s *server) do(method, path string, body any, header map[string]string) (*http.Response, []byte) {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(s.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	require.NoError(s.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp, out
}

// sdkRequests are the two request bodies the OpenAI SDK sent in the recorded run (recorded by
// OpenInference in input.value).
func sdkRequests(t testing.TB) []map[string]any {
	td := testfixtures.Traces(t, testfixtures.OpenInference)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(1).Spans()
	var out []map[string]any
	for i := 0; i < spans.Len(); i++ {
		v, _ := spans.At(i).Attributes().Get("input.value")
		var body map[string]any
		require.NoError(t, json.Unmarshal([]byte(v.Str()), &body))
		out = append(out, body)
	}
	return out
}

func caseOf(cases []*replaycase.Case, service string) *replaycase.Case {
	for _, c := range cases {
		if c.Provenance.ServiceName == service {
			return c
		}
	}
	return nil
}

func TestReplayEveryRecordingToTheSDKRequests(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference)
	s := startReplay(t, root, nil)
	requests := sdkRequests(t)
	for _, service := range []string{"holdout-agent-otel", "holdout-agent-traceloop", "holdout-agent-openinference"} {
		c := caseOf(cases, service)
		require.NotNil(t, c, service)
		base := "/v1/cases/" + c.CaseID + "/openai/v1/chat/completions"
		session := map[string]string{"X-Replay-Session": service}

		resp, body := s.do("POST", base, requests[0], session)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		var first struct {
			ID      string
			Model   string
			Choices []struct {
				Message struct {
					Role      string
					Content   *string
					ToolCalls []struct {
						ID       string
						Type     string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason string `json:"finish_reason"`
			}
			Usage struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
		}
		require.NoError(t, json.Unmarshal(body, &first))
		assert.Equal(t, "chatcmpl-1", first.ID, service)
		assert.Equal(t, "gpt-4o-mini-2024-07-18", first.Model)
		require.Len(t, first.Choices, 1)
		assert.Equal(t, "tool_calls", first.Choices[0].FinishReason)
		assert.Nil(t, first.Choices[0].Message.Content)
		require.Len(t, first.Choices[0].Message.ToolCalls, 1)
		call := first.Choices[0].Message.ToolCalls[0]
		assert.Equal(t, "call_1_0", call.ID)
		assert.Equal(t, "get_weather", call.Function.Name)
		assert.JSONEq(t, `{"city":"Paris","unit":"celsius"}`, call.Function.Arguments)
		assert.Equal(t, 96, first.Usage.TotalTokens)

		resp, body = s.do("POST", base, requests[1], session)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Contains(t, string(body), `"content":"Answer #2: based on {\"city\":\"Paris\",\"temperature\":14,\"unit\":\"celsius\",\"sky\":\"overcast\"} it is mild in Paris."`)
		assert.Contains(t, string(body), `"finish_reason":"stop"`)
	}
}

// readSSE collects the data lines of a Server-Sent Events body.
func readSSE(t *testing.T, body []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, line)
		}
	}
	return out
}

func TestStreamingReplay(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	req := sdkRequests(t)[0]
	req["stream"] = true
	req["stream_options"] = map[string]any{"include_usage": true}
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", req, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := readSSE(t, body)
	require.Equal(t, "[DONE]", events[len(events)-1])
	var role, name, id, args, finish string
	var usage map[string]any
	for _, e := range events[:len(events)-1] {
		var chunk struct {
			ID      string
			Object  string
			Choices []struct {
				Delta struct {
					Role      string
					ToolCalls []struct {
						Index    int
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
			Usage map[string]any
		}
		require.NoError(t, json.Unmarshal([]byte(e), &chunk))
		assert.Equal(t, "chat.completion.chunk", chunk.Object)
		assert.Equal(t, "chatcmpl-1", chunk.ID)
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, c := range chunk.Choices {
			role += c.Delta.Role
			for _, tc := range c.Delta.ToolCalls {
				id += tc.ID
				name += tc.Function.Name
				args += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	assert.Equal(t, "assistant", role)
	assert.Equal(t, "call_1_0", id)
	assert.Equal(t, "get_weather", name)
	assert.JSONEq(t, `{"city":"Paris","unit":"celsius"}`, args)
	assert.Equal(t, "tool_calls", finish)
	assert.Equal(t, float64(96), usage["total_tokens"])
}

func TestStrictMissNamesTheChangedFieldAndLenientDiverges(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	req := sdkRequests(t)[0]
	req["messages"].([]any)[1].(map[string]any)["content"] = "What is the weather in Lyon today?"
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"

	resp, body := s.do("POST", path, req, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	var miss struct {
		Error struct {
			Message string
			Type    string
			Paths   []string
		}
	}
	require.NoError(t, json.Unmarshal(body, &miss))
	assert.Equal(t, "not_found_error", miss.Error.Type)
	assert.Contains(t, miss.Error.Message, "differs from the next recorded model call of case "+cases[0].CaseID+" at: messages[1].content[0].text")
	assert.Equal(t, []string{"messages[1].content[0].text"}, miss.Error.Paths)
	assert.NotContains(t, string(body), "Paris", "no recorded text")
	assert.NotContains(t, string(body), "Lyon", "no requested text")
	assert.NotContains(t, string(body), cases[0].Steps[1].CallSiteID, "no hash of the recorded request")

	resp, body = s.do("POST", path, req, map[string]string{headerMode: ModeLenient.String(), "X-Replay-Session": "lenient-1"})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "true", resp.Header.Get(headerDivergence))
	assert.Contains(t, string(body), `"id":"call_1_0"`, "the next recorded call of the case")
	_, body = s.do("GET", "/v1/divergences?session=lenient-1", nil, nil)
	var divs struct{ Divergences []Divergence }
	require.NoError(t, json.Unmarshal(body, &divs))
	require.Len(t, divs.Divergences, 1)
	assert.Equal(t, []string{"messages[1].content[0].text"}, divs.Divergences[0].Paths)
	assert.Empty(t, divs.Divergences[0].Differences, "values only with local_debug")
	assert.Equal(t, cases[0].CaseID, divs.Divergences[0].CaseID)

	// A session id longer than the bound is found under the id the client sent.
	long := map[string]string{headerSession: strings.Repeat("l", 2*maxSessionIDLength)}
	resp, body = s.do("POST", path, req, map[string]string{headerMode: ModeLenient.String(), headerSession: long[headerSession]})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	_, body = s.do("GET", "/v1/divergences", nil, long)
	divs.Divergences = nil
	require.NoError(t, json.Unmarshal(body, &divs))
	assert.Len(t, divs.Divergences, 1)
}

// Identical requests recorded twice in a run are served in recorded order, per session, on
// the base URL that names no case too, where a session follows the first run that recorded
// the request: another run that recorded it once (the plain one here) is not served in its
// stead when the session makes it a third time.
func TestIdenticalRecordingsServedInOrderPerSession(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	twice := testfixtures.Traces(t, testfixtures.OpenInference)
	testfixtures.WithTraceID(twice, plog.NewLogs(), 0)
	llm := twice.ResourceSpans().At(0).ScopeSpans().At(1).Spans()
	again := llm.AppendEmpty()
	llm.At(0).CopyTo(again) // the first call made again after the second, answered otherwise
	again.SetSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
	later := llm.At(1).EndTimestamp().AsTime().Add(time.Second)
	again.SetStartTimestamp(pcommon.NewTimestampFromTime(later))
	again.SetEndTimestamp(pcommon.NewTimestampFromTime(later.Add(time.Second)))
	out, _ := again.Attributes().Get("output.value")
	out.SetStr(strings.Replace(out.Str(), "chatcmpl-1", "chatcmpl-9", 1))
	plain := testfixtures.Traces(t, testfixtures.OpenInference)
	testfixtures.WithTraceID(plain, plog.NewLogs(), 1)
	exp := testdataset.Writer(t, root, "zstd")
	runs := []string{testfixtures.OpenInference, testfixtures.OpenInference}
	cases := testpipeline.RunTraces(t, exp, runs, []ptrace.Traces{twice, plain})
	require.NoError(t, exp.Shutdown(context.Background()))
	require.Len(t, cases, 2)
	require.Equal(t, "chatcmpl-9", cases[0].Steps[4].ResponseID, "the run that made the first call twice")
	s := startReplay(t, root, nil)
	req := sdkRequests(t)[0]
	ask := func(path, session string) (code int, caseID, id string) {
		resp, b := s.do("POST", path, req, map[string]string{headerSession: session})
		var answer struct{ ID string }
		_ = json.Unmarshal(b, &answer)
		return resp.StatusCode, resp.Header.Get("X-Replay-Case-Id"), answer.ID
	}
	for _, path := range []string{"/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions", "/openai/v1/chat/completions"} {
		var ids []string
		for range 2 {
			code, caseID, id := ask(path, "twice "+path)
			require.Equal(t, http.StatusOK, code, path)
			assert.Equal(t, cases[0].CaseID, caseID, path)
			ids = append(ids, id)
		}
		assert.Equal(t, []string{"chatcmpl-1", "chatcmpl-9"}, ids, "%s: in recorded order", path)
		code, _, _ := ask(path, "twice "+path)
		assert.Equal(t, http.StatusNotFound, code, "%s: a third is a repeat, not the plain run's recording", path)
		code, _, id := ask(path, "another "+path)
		assert.True(t, code == http.StatusOK && id == "chatcmpl-1", "%s: another session starts from the first recording", path)
	}
}

func TestToolAndRetrievalReplay(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	base := "/v1/cases/" + cases[0].CaseID
	resp, body := s.do("POST", base+"/tools/get_weather", `{"unit": "celsius", "city": "Paris"}`, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var tc replaycase.ToolCall
	require.NoError(t, json.Unmarshal(body, &tc))
	assert.Equal(t, `{"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"}`, tc.Result)
	assert.Equal(t, "call_1_0", tc.ID)

	resp, body = s.do("POST", base+"/tools/get_weather", `{"city":"Lyon","unit":"celsius"}`, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, string(body), `"paths":["arguments.city"]`)
	assert.NotContains(t, string(body), "Lyon")

	resp, body = s.do("POST", base+"/retrieval", map[string]string{"query": "What is the weather in Paris today?", "data_source": "kb-v3"}, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var r replaycase.Retrieval
	require.NoError(t, json.Unmarshal(body, &r))
	require.Len(t, r.Documents, 2)
	assert.Equal(t, "doc-paris-climate", r.Documents[0].ID)
	assert.InDelta(t, 0.91, *r.Documents[0].Score, 1e-9)

	resp, _ = s.do("POST", base+"/retrieval", map[string]string{"query": "weather in Lyon"}, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestCaseAndCallLookup(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	s := startReplay(t, root, nil)
	list := func(q string) ([]string, string) { return casesPage(t, s, q) }
	all, _ := list("")
	assert.Len(t, all, 3)
	accepted, _ := list("?status=accepted&agent=weather-bot")
	assert.Len(t, accepted, 2)
	quarantined, _ := list("?status=quarantined")
	assert.Len(t, quarantined, 1)
	page1, next := list("?limit=2")
	page2, last := list("?limit=2&page_token=" + next)
	assert.Len(t, page1, 2)
	assert.Len(t, page2, 1)
	assert.Empty(t, last)
	none, _ := list("?since=2030-01-01T00:00:00Z")
	assert.Empty(t, none)
	resp, _ := s.do("GET", "/v1/cases?since=yesterday", nil, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	resp, body := s.do("GET", "/v1/cases/"+cases[0].CaseID, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var c replaycase.Case
	require.NoError(t, json.Unmarshal(body, &c))
	assert.Equal(t, cases[0].CaseID, c.CaseID)
	assert.Len(t, c.Steps, len(cases[0].Steps))

	callID := cases[0].Steps[1].CallSiteID
	resp, body = s.do("GET", "/v1/calls/"+callID, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `"call_site_id":"`+callID+`"`)
	assert.Contains(t, string(body), `"input_messages"`)
	assert.Contains(t, string(body), `"output_messages"`)
	resp, _ = s.do("GET", "/v1/cases/nope", nil, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// Cases written after the extension started are replayable within a refresh interval.
func TestNewCasesBecomeReplayable(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	s := startReplay(t, root, func(c *Config) { c.RefreshInterval = time.Second })
	cases := writeDataset(t, root, testfixtures.Traceloop)
	written := time.Now()
	for {
		resp, _ := s.do("GET", "/v1/cases/"+cases[0].CaseID, nil, nil)
		if resp.StatusCode == http.StatusOK {
			break
		}
		require.Less(t, time.Since(written), 5*time.Second, "not replayable within 5 s")
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("replayable %s after the file was published", time.Since(written).Round(time.Millisecond))
}

func TestLookupTelemetry(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	s := startReplayWith(t, root, nil, metadatatest.NewSettings(tel), componenttest.NewNopHost())
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	req := sdkRequests(t)[0]
	s.do("POST", path, req, nil) // exact
	req["messages"].([]any)[1].(map[string]any)["content"] = "changed"
	s.do("POST", path, req, nil)                                                                          // miss
	s.do("POST", path, req, map[string]string{headerMode: ModeLenient.String(), "X-Replay-Session": "t"}) // divergent
	chat := func(outcome string) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: 1, Attributes: attribute.NewSet(attribute.String("endpoint", "chat"), attribute.String("outcome", outcome))}
	}
	metadatatest.AssertEqualExtensionReplayLookups(t, tel, []metricdata.DataPoint[int64]{chat("exact"), chat("miss"), chat("divergent")},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	got, err := tel.GetMetric("otelcol_extension_replay_lookup_duration")
	require.NoError(t, err)
	assert.Equal(t, uint64(3), got.Data.(metricdata.Histogram[float64]).DataPoints[0].Count)
}

// Lenient replay serves the next recorded call whatever the request says; two requests of one
// session sent at once must get two different calls, never the same one twice.
func TestConcurrentLenientRequestsOfASessionGetDistinctCalls(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, func(c *Config) { c.Mode = ModeLenient })
	req := sdkRequests(t)[0]
	req["messages"].([]any)[1].(map[string]any)["content"] = "Something the recording never asked"
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	for i := range 20 {
		session := fmt.Sprintf("concurrent-%d", i)
		bodies := make([]string, 2)
		var wg sync.WaitGroup
		for j := range bodies {
			wg.Go(func() {
				resp, body := s.do("POST", path, req, map[string]string{"X-Replay-Session": session})
				assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
				bodies[j] = string(body)
			})
		}
		wg.Wait()
		toolCall := func(b string) bool { return strings.Contains(b, `"id":"call_1_0"`) }
		assert.NotEqual(t, toolCall(bodies[0]), toolCall(bodies[1]), "session %s was served the same call twice", session)
	}
}
