package wireapi

import (
	"encoding/json"

	"github.com/reprise-dev/reprise/replaycase"
)

// anthropicSource is the source of an Anthropic image or document block. Its members stay raw
// so that a missing member and one of the wrong type are refused naming it.
type anthropicSource struct {
	Type      json.RawMessage `json:"type"`
	MediaType json.RawMessage `json:"media_type"`
	Data      json.RawMessage `json:"data"`
	URL       json.RawMessage `json:"url"`
	FileID    json.RawMessage `json:"file_id"`
}

// anthropicMedia reads an image or document block (param names it) into the part the GenAI
// conventions give it, as the OpenLLMetry Anthropic instrumentations record it, so that such a
// recording and the live request agree: inline base64 data is a blob (the base64 text as its
// content, the media type), a URL a uri part, an uploaded file a file part, a plain-text
// document its text. The block's modality is its type (image, document). A source that cannot be
// read is refused naming its field: read as no part, the block would be dropped and the request
// would match the recording of the same request without it.
func anthropicMedia(blockType string, raw json.RawMessage, param string) (replaycase.Part, error) {
	param += ".source"
	var src anthropicSource
	switch kind(raw) {
	case 0, 'n':
		return replaycase.Part{}, missing(param)
	case '{':
		_ = json.Unmarshal(raw, &src) // raw members: any object decodes
	default:
		return replaycase.Part{}, invalidType(param, "an object")
	}
	typ, err := sourceString(src.Type, param+".type")
	if err != nil {
		return replaycase.Part{}, err
	}
	part := replaycase.Part{Modality: blockType}
	switch {
	case typ == "base64":
		part.Type = "blob"
		if part.MimeType, err = sourceString(src.MediaType, param+".media_type"); err == nil {
			part.Content, err = sourceString(src.Data, param+".data")
		}
	case typ == "url":
		part.Type = "uri"
		part.URI, err = sourceString(src.URL, param+".url")
	case typ == "file":
		part.Type = "file"
		part.FileID, err = sourceString(src.FileID, param+".file_id")
	case typ == "text" && blockType == "document":
		part = replaycase.Part{Type: "text"}
		part.Content, err = sourceString(src.Data, param+".data")
	case blockType == "document": // content (a list of blocks) is not read
		return replaycase.Part{}, invalidValue(param+".type", "base64, text, url or file")
	default:
		return replaycase.Part{}, invalidValue(param+".type", "base64, url or file")
	}
	return part, err
}

// sourceString is a required, non-empty string member of a block's source.
func sourceString(raw json.RawMessage, param string) (string, error) {
	var s string
	switch k := kind(raw); {
	case k == 0 || k == 'n':
		return "", missing(param)
	case k != '"' || json.Unmarshal(raw, &s) != nil:
		return "", invalidType(param, "a string")
	case s == "":
		return "", missing(param)
	}
	return s, nil
}

// AnthropicMediaPart reads the source of an image or document block (blockType) as
// ParseMessagesRequest does, for a recording that kept the block itself (normalize).
func AnthropicMediaPart(blockType string, source json.RawMessage) (replaycase.Part, error) {
	return anthropicMedia(blockType, source, blockType)
}
