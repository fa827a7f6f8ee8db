package normalize

import (
	"encoding/json"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// anthropicMediaPart reads a part that is an Anthropic image or document block itself, its
// source included, as the OpenLLMetry instrumentations write a block they have no part for
// (Python: documents and image files; JS: image files), with the replay's own reader, so that
// the recording and the live request get the same part. ok is false for any other part and for
// a source that cannot be read, which the caller keeps whole.
func anthropicMediaPart(m map[string]any) (part replaycase.Part, ok bool) {
	t := mapStr(m, "type")
	source, isObject := m["source"].(map[string]any)
	if t != "image" && t != "document" || !isObject {
		return part, false
	}
	raw, err := json.Marshal(source)
	if err != nil {
		return part, false
	}
	part, err = wireapi.AnthropicMediaPart(t, raw)
	return part, err == nil
}
