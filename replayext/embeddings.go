package replayext

import (
	"net/http"
	"strconv"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/scrub"
	"github.com/reprise-dev/reprise/wireapi"
)

// endpointEmbeddings counts and orders embedding lookups apart from model calls.
const endpointEmbeddings = "embeddings"

// embeddings replays an OpenAI embeddings call: the recorded vectors of the case's embedding
// step with the same model and input texts, in the order the session asks. The cross-case route
// has no index of embedding calls, so it answers from the case the session's model calls were
// last served from; before any model call it names the scoped route to use instead.
func (r *replay) embeddings(w http.ResponseWriter, req *http.Request) {
	caseID, raw, release, ok := r.begin(w, req)
	if !ok {
		return
	}
	defer release()
	parsed, err := wireapi.ParseEmbeddingsRequest(raw)
	if err != nil {
		writeRequestError(w, err)
		return
	}
	if caseID == "" {
		if caseID = r.sessionCase(req); caseID == "" {
			writeError(w, http.StatusNotFound, "not_found_error", "no case is bound to this replay session yet: send embeddings to /v1/cases/{case_id}/openai/v1/embeddings", nil)
			return
		}
	}
	c, ok := r.recordedCase(w, req, caseID)
	if !ok {
		return
	}
	var steps []*replaycase.Step
	for i := range c.Steps {
		if c.Steps[i].Kind == replaycase.StepEmbedding {
			steps = append(steps, &c.Steps[i])
		}
	}
	for i, in := range parsed.Input {
		parsed.Input[i] = r.scrubber.Text(in, &scrub.Report{}) // recorded texts are scrubbed already
	}
	// A request that asks for a vector length (dimensions) is answered by vectors of that
	// length: a recording whose vectors have another length answered another request.
	shape := func(model string, input []string, dimensions int) any {
		if parsed.Dimensions == 0 {
			return map[string]any{"model": model, "input": input}
		}
		return map[string]any{"model": model, "input": input, "dimensions": dimensions}
	}
	requested := shape(parsed.Model, parsed.Input, parsed.Dimensions)
	recorded := func(h hit) any {
		st := steps[h.pos]
		texts := make([]string, len(st.Embeddings))
		for i, e := range st.Embeddings {
			texts[i] = e.Text
		}
		dimensions := 0
		if len(st.Embeddings) > 0 {
			dimensions = len(st.Embeddings[0].Vector)
		}
		return shape(st.ModelConfig.RequestModel, texts, dimensions)
	}
	label := func(h hit) string { return steps[h.pos].SpanID }
	it, in := r.itemsOf(caseID, endpointEmbeddings, endpointEmbeddings, "embedding call", len(steps), requested, recorded, label, casediff.RetrievalDrift, casediff.RetrievalDrift)
	// In hybrid mode a miss (and every later call of the session) goes to the OpenAI upstream.
	in.api, in.body = apiOpenAI, raw
	h, ok := r.lookup(w, req, it, in)
	if !ok {
		return
	}
	st := steps[h.pos]
	for i, e := range st.Embeddings {
		if len(e.Vector) == 0 { // only a case accepted without the embeddings evidence check
			writeError(w, http.StatusNotFound, "not_found_error", "case "+caseID+" recorded no vector for input "+strconv.Itoa(i)+" of this embedding call ("+replaycase.ReasonEmbeddingsNotRecorded+")", nil)
			return
		}
	}
	wireapi.WriteEmbeddingsResponse(w, parsed, st)
}
