package jsonany

import "strings"

// DecodeFields is Decode for a caller that reads only some top-level members of an object: it
// returns the members of the object text named in names, decoded as Decode decodes them, and
// checks the rest without building them. OpenInference records the request's parameters with
// its tools, whose schemas are most of the text, and the normalizer reads a few numbers there.
//
// ok is false when text is not one JSON object with only JSON whitespace around it, or holds
// something Decode leaves to encoding/json, or nests more than maxDepth brackets in all (so
// that no member left unbuilt can reach a nesting limit): the caller then decodes the whole
// text, which gives the value or the error. The result is what the caller would find under
// those names in the whole decode.
func DecodeFields(text string, names ...string) (fields map[string]any, ok bool) {
	if strings.Count(text, "[")+strings.Count(text, "{") > maxDepth {
		return nil, false
	}
	if names == nil {
		names = []string{} // object keeps every member for nil
	}
	return decodeText(text, func(r *reader) (map[string]any, bool) {
		if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return nil, false
		}
		v, ok := r.object(1, names)
		m, _ := v.(map[string]any)
		return m, ok
	})
}
