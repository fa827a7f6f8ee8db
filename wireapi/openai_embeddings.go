package wireapi

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/reprise-dev/reprise/replaycase"
)

// EmbeddingsRequest is what an OpenAI embeddings request asks for that a recorded call can
// answer: the model and the input texts, and whether the vectors come back as base64 (the
// openai npm SDK asks for base64 unless told otherwise and decodes it itself).
type EmbeddingsRequest struct {
	Model  string
	Input  []string
	Base64 bool
	// Dimensions is the vector length asked for (text-embedding-3 models shorten their
	// vectors to it), 0 when not asked.
	Dimensions int
}

type embeddingsBody struct {
	Model          *string         `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int64          `json:"dimensions"`
}

// ParseEmbeddingsRequest reads POST /v1/embeddings. Token-array inputs are refused: the
// telemetry records input texts, so only texts can be matched against a recording.
func ParseEmbeddingsRequest(raw []byte) (*EmbeddingsRequest, error) {
	var body embeddingsBody
	if err := decodeObject(raw, &body); err != nil { // errors name the field
		return nil, err
	}
	if body.Model == nil || *body.Model == "" {
		return nil, missing("model")
	}
	r := &EmbeddingsRequest{Model: *body.Model}
	// null is no input, and a null text is not "": decoding null into a string leaves it empty,
	// which would look up a recording of the empty text.
	const want = "a string or a non-empty array of strings (token arrays cannot be replayed)"
	switch kind(body.Input) {
	case 0, 'n':
		return nil, missing("input")
	case '"':
		var one string
		_ = json.Unmarshal(body.Input, &one)
		r.Input = []string{one}
	case '[':
		var texts []*string
		if json.Unmarshal(body.Input, &texts) != nil || len(texts) == 0 {
			return nil, invalidType("input", want)
		}
		for i, s := range texts {
			if s == nil {
				return nil, invalidType(fmt.Sprintf("input[%d]", i), "a string")
			}
			r.Input = append(r.Input, *s)
		}
	default:
		return nil, invalidType("input", want)
	}
	if d := body.Dimensions; d != nil {
		if *d < 1 || *d > math.MaxInt32 {
			return nil, invalidValue("dimensions", "a positive integer")
		}
		r.Dimensions = int(*d)
	}
	switch body.EncodingFormat {
	case "", "float":
	case "base64":
		r.Base64 = true
	default:
		return nil, invalidValue("encoding_format", "'float' or 'base64'")
	}
	return r, nil
}

// WriteEmbeddingsResponse answers with the recorded vectors of an embedding step, in the
// shape of OpenAI's embeddings response. base64 is the little-endian float32 bytes of each
// vector, which is what the API sends.
func WriteEmbeddingsResponse(w http.ResponseWriter, r *EmbeddingsRequest, st *replaycase.Step) {
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(st.Embeddings))
	for i, e := range st.Embeddings {
		data[i] = item{Object: "embedding", Index: i, Embedding: e.Vector}
		if r.Base64 {
			buf := make([]byte, 4*len(e.Vector))
			for j, f := range e.Vector {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(float32(f)))
			}
			data[i].Embedding = base64.StdEncoding.EncodeToString(buf)
		}
	}
	model := st.ModelConfig.ResponseModel
	if model == "" {
		model = st.ModelConfig.RequestModel
	}
	writeJSONBody(w, map[string]any{
		"object": "list", "data": data, "model": model,
		"usage": map[string]int64{"prompt_tokens": st.Usage.InputTokens, "total_tokens": st.Usage.InputTokens},
	})
}
