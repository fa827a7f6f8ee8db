package normalize

import (
	"github.com/reprise-dev/reprise/replaycase"
)

var openInferenceKinds = map[string]struct {
	kind replaycase.StepKind
	op   string
}{
	"LLM":       {replaycase.StepLLM, "chat"},
	"EMBEDDING": {replaycase.StepEmbedding, "embeddings"},
	"TOOL":      {replaycase.StepTool, "execute_tool"},
	"RETRIEVER": {replaycase.StepRetrieval, "retrieval"},
	"RERANKER":  {replaycase.StepRetrieval, "rerank"},
	"AGENT":     {replaycase.StepAgent, "invoke_agent"},
}

// openInference reads OpenInference span kinds and RETRIEVER documents
// (retrieval.documents.{i}.document.{id,score,content}, query in input.value).
// Messages, tools and usage come with the OpenInference issue.
func openInference(in *SpanInput, b *stepBuilder) bool {
	a := in.Span.Attributes()
	spanKind := getStr(a, "openinference.span.kind")
	if spanKind == "" {
		return false
	}
	if k, ok := openInferenceKinds[spanKind]; ok {
		b.kind(k.kind, k.op)
	}
	if spanKind == "RETRIEVER" {
		r := b.retrieval()
		setStr(&r.Query, getStr(a, "input.value"))
		if r.Documents == nil {
			for _, item := range indexed(a, "retrieval.documents.") {
				d := replaycase.Document{}
				if v, ok := item["document.id"]; ok {
					d.ID = v.AsString()
				}
				if v, ok := item["document.content"]; ok {
					d.Content = v.AsString()
				}
				if v, ok := item["document.score"]; ok {
					if f, ok := toFloat(v.AsRaw()); ok {
						d.Score = &f
					}
				}
				r.Documents = append(r.Documents, d)
			}
		}
	}
	return true
}
