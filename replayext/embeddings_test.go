package replayext

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// withEmbeddingSpan adds to the OpenInference run one embedding call under its root span, with
// the attributes OpenInference's JS OpenAI instrumentation writes for
// embeddings.create({model, input: [..]}): the texts from the request, the vectors from the
// response. attrs overrides or removes (nil) attributes.
func withEmbeddingSpan(t *testing.T, attrs map[string]any) ptrace.Traces {
	td := testfixtures.Traces(t, testfixtures.OpenInference)
	var root ptrace.Span
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.ParentSpanID().IsEmpty() {
					root = sp
				}
			}
		}
	}
	sp := td.ResourceSpans().At(0).ScopeSpans().At(1).Spans().AppendEmpty()
	sp.SetTraceID(root.TraceID())
	sp.SetSpanID(pcommon.SpanID{0xe1, 0xe2, 0xe3, 0xe4, 1, 2, 3, 4})
	sp.SetParentSpanID(root.SpanID())
	sp.SetName("OpenAI Embeddings")
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetStartTimestamp(root.StartTimestamp() + 1000)
	sp.SetEndTimestamp(root.StartTimestamp() + 2000)
	sp.Status().SetCode(ptrace.StatusCodeOk)
	all := map[string]any{
		"openinference.span.kind": "EMBEDDING", "embedding.model_name": "text-embedding-3-small",
		"llm.system": "openai", "llm.provider": "openai",
		"input.value": `["weather in Paris","weather in Lyon"]`, "input.mime_type": "application/json",
		"embedding.embeddings.0.embedding.text":   "weather in Paris",
		"embedding.embeddings.1.embedding.text":   "weather in Lyon",
		"embedding.embeddings.0.embedding.vector": []any{0.015625, -0.5, int64(1)},
		"embedding.embeddings.1.embedding.vector": []any{0.25, 0.0078125, -2.0},
	}
	for k, v := range attrs {
		if v == nil {
			delete(all, k)
		} else {
			all[k] = v
		}
	}
	require.NoError(t, sp.Attributes().FromRaw(all))
	return td
}

func runThrough(t *testing.T, root string, td ptrace.Traces) *replaycase.Case {
	exp := testdataset.Writer(t, root, "zstd")
	cases := testpipeline.RunTraces(t, exp, []string{testfixtures.OpenInference}, []ptrace.Traces{td})
	require.NoError(t, exp.Shutdown(context.Background()))
	require.Len(t, cases, 1)
	return cases[0]
}

type embeddingsBody struct {
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

func TestEmbeddingsReplay(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	c := runThrough(t, root, withEmbeddingSpan(t, nil))
	require.Equal(t, replaycase.StatusAccepted, c.Status, c.Reasons)
	s := startReplay(t, root, nil)
	scoped := "/v1/cases/" + c.CaseID + "/openai/v1/embeddings"
	request := map[string]any{"model": "text-embedding-3-small", "input": []string{"weather in Paris", "weather in Lyon"}}

	resp, body := s.do("POST", scoped, request, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var got embeddingsBody
	require.NoError(t, json.Unmarshal(body, &got))
	assert.Equal(t, "list", got.Object)
	assert.Equal(t, "text-embedding-3-small", got.Model)
	require.Len(t, got.Data, 2)
	assert.JSONEq(t, `[0.015625,-0.5,1]`, string(got.Data[0].Embedding))
	assert.JSONEq(t, `[0.25,0.0078125,-2]`, string(got.Data[1].Embedding))
	assert.Equal(t, 1, got.Data[1].Index)

	// The openai npm SDK asks for base64: little-endian float32s.
	request["encoding_format"] = "base64"
	resp, body = s.do("POST", scoped, request, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.NoError(t, json.Unmarshal(body, &got))
	var b64 string
	require.NoError(t, json.Unmarshal(got.Data[1].Embedding, &b64))
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	require.Len(t, raw, 12)
	for i, want := range []float32{0.25, 0.0078125, -2} {
		assert.Equal(t, want, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}

	// Another input is a miss that names what changed and does not echo the text.
	resp, body = s.do("POST", scoped, map[string]any{"model": "text-embedding-3-small", "input": "weather in Nice"}, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	assert.NotContains(t, string(body), "Nice")

	resp, body = s.do("POST", scoped, map[string]any{"model": "text-embedding-3-small", "input": []int{1, 2}}, nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"param":"input"`)

	// Cross-case: answered from the case the session's model calls were served from.
	session := map[string]string{headerSession: "emb-session"}
	delete(request, "encoding_format")
	resp, body = s.do("POST", "/openai/v1/embeddings", request, session)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	assert.Contains(t, string(body), "/v1/cases/{case_id}/openai/v1/embeddings")
	resp, body = s.do("POST", "/openai/v1/chat/completions", sdkRequests(t)[0], session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	resp, body = s.do("POST", "/openai/v1/embeddings", request, session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.NoError(t, json.Unmarshal(body, &got))
	assert.JSONEq(t, `[0.015625,-0.5,1]`, string(got.Data[0].Embedding))
}

// A run whose embedding call recorded no vectors is quarantined with the reason, so it is not
// served.
func TestEmbeddingsNotRecordedQuarantines(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	c := runThrough(t, root, withEmbeddingSpan(t, map[string]any{
		"embedding.embeddings.0.embedding.vector": nil, "embedding.embeddings.1.embedding.vector": nil,
	}))
	require.Equal(t, replaycase.StatusQuarantined, c.Status)
	require.True(t, c.HasReason(replaycase.ReasonEmbeddingsNotRecorded), c.Reasons)
	s := startReplay(t, root, nil)
	resp, _ := s.do("POST", "/v1/cases/"+c.CaseID+"/openai/v1/embeddings", map[string]any{"model": "text-embedding-3-small", "input": "weather in Paris"}, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// In hybrid mode an embeddings miss goes live to the OpenAI upstream, marked live, and the
// session's later calls follow; recorded inputs are still served before the miss.
func TestEmbeddingsHybridGoesLive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	c := runThrough(t, root, withEmbeddingSpan(t, nil))
	u := startUpstream(t)
	s := hybridServer(t, root, u)
	scoped := "/v1/cases/" + c.CaseID + "/openai/v1/embeddings"
	session := map[string]string{headerSession: "emb-hybrid"}
	resp, body := s.do("POST", scoped, map[string]any{"model": "text-embedding-3-small", "input": []string{"weather in Paris", "weather in Lyon"}}, session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Empty(t, resp.Header.Get(headerLive))
	assert.Zero(t, u.count())

	resp, body = s.do("POST", scoped, map[string]any{"model": "text-embedding-3-small", "input": "weather in Nice"}, session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "true", resp.Header.Get(headerLive))
	require.Equal(t, 1, u.count())
	assert.Equal(t, "/v1/embeddings", u.calls[0].URL.Path)
}
