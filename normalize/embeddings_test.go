package normalize

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

func reasonsOf(findings []replaycase.Reason, code string) []replaycase.Reason {
	var out []replaycase.Reason
	for _, f := range findings {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

// The Vercel AI SDK 6 embed capture recorded its input (ai.values) and vector (ai.embeddings).
func TestVercelEmbeddingsAreRead(t *testing.T) {
	for _, td := range jsSpanTraces(t, "vercel-ai_v6-raw-spans-generate-stream-object-embed.json") {
		if td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name() != "ai.embed.doEmbed" {
			continue
		}
		c, findings, _ := Build(td, plog.NewLogs())
		require.Len(t, c.Steps, 1)
		st := c.Steps[0]
		require.Equal(t, replaycase.APIOpenAIEmbeddings, st.API)
		require.Len(t, st.Embeddings, 1)
		require.Equal(t, "The quick brown fox jumps over the lazy dog.", st.Embeddings[0].Text)
		require.Len(t, st.Embeddings[0].Vector, 1536, "text-embedding-3-small")
		require.InDelta(t, -0.018449828, st.Embeddings[0].Vector[0], 1e-12)
		require.Empty(t, reasonsOf(findings, replaycase.ReasonEmbeddingsNotRecorded))
		return
	}
	t.Fatal("no ai.embed.doEmbed span in the capture")
}

// OpenInference's JS OpenAI instrumentation writes embedding.embeddings.N.embedding.text from the
// request and embedding.embeddings.N.embedding.vector from the response (a number array; OTLP
// JSON exporters write whole numbers as ints). The official OTel semconv span records neither.
func TestEmbeddingEvidence(t *testing.T) {
	oi := func(extra map[string]any) map[string]any {
		attrs := map[string]any{
			"openinference.span.kind": "EMBEDDING", "embedding.model_name": "text-embedding-3-small",
			"llm.system": "openai", "input.value": `["alpha","beta"]`, "input.mime_type": "application/json",
			"embedding.embeddings.0.embedding.text": "alpha", "embedding.embeddings.1.embedding.text": "beta",
		}
		for k, v := range extra {
			attrs[k] = v
		}
		return attrs
	}
	for _, tc := range []struct {
		name   string
		span   string
		attrs  map[string]any
		want   []replaycase.Embedding
		detail string // "" when the case must carry no embeddings_not_recorded reason
	}{
		{"openinference, recorded", "OpenAI Embeddings", oi(map[string]any{
			"embedding.embeddings.0.embedding.vector": []any{0.25, -1.5},
			"embedding.embeddings.1.embedding.vector": []any{int64(0), 0.125},
		}), []replaycase.Embedding{{Text: "alpha", Vector: []float64{0.25, -1.5}}, {Text: "beta", Vector: []float64{0, 0.125}}}, ""},
		{"openinference, one vector missing", "OpenAI Embeddings", oi(map[string]any{
			"embedding.embeddings.0.embedding.vector": []any{0.25, -1.5},
		}), []replaycase.Embedding{{Text: "alpha", Vector: []float64{0.25, -1.5}}, {Text: "beta"}},
			`embedding call "OpenAI Embeddings" recorded no vector (or one that is not all finite numbers) for input 1`},
		{"openinference, vector not numbers", "OpenAI Embeddings", oi(map[string]any{
			"embedding.embeddings.0.embedding.vector": []any{"x"},
			"embedding.embeddings.1.embedding.vector": []any{0.5},
		}), []replaycase.Embedding{{Text: "alpha"}, {Text: "beta", Vector: []float64{0.5}}},
			`embedding call "OpenAI Embeddings" recorded no vector (or one that is not all finite numbers) for input 0`},
		{"otel semconv", "embeddings text-embedding-3-small", map[string]any{
			"gen_ai.operation.name": "embeddings", "gen_ai.provider.name": "openai", "gen_ai.request.model": "text-embedding-3-small",
			"gen_ai.usage.input_tokens": int64(4),
		}, nil, `embedding call "embeddings text-embedding-3-small" recorded neither its input text nor its vectors (OpenInference records them; OTel GenAI semconv does not)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, findings, genAI := Build(attributeSpan(t, tc.span, tc.attrs, 2), plog.NewLogs())
			require.True(t, genAI)
			require.Len(t, c.Steps, 1)
			st := c.Steps[0]
			require.Equal(t, replaycase.StepEmbedding, st.Kind)
			require.Equal(t, replaycase.APIOpenAIEmbeddings, st.API)
			require.Equal(t, tc.want, st.Embeddings)
			got := reasonsOf(findings, replaycase.ReasonEmbeddingsNotRecorded)
			if tc.detail == "" {
				require.Empty(t, got)
			} else {
				require.Equal(t, []replaycase.Reason{{Code: replaycase.ReasonEmbeddingsNotRecorded, Detail: tc.detail, SpanID: st.SpanID}}, got)
			}

			// The canonical form carries the inputs and vectors exactly.
			td := ptrace.NewTraces()
			require.NoError(t, replaycase.Encode(c, td))
			back, err := replaycase.Decode(td)
			require.NoError(t, err)
			require.Equal(t, st.Embeddings, back[0].Steps[0].Embeddings)
			require.Equal(t, st.API, back[0].Steps[0].API)
		})
	}
}
