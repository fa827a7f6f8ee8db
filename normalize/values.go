package normalize

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/jsonany"
)

// errTruncated marks JSON that ends early: the emitter or an attribute length limit cut it.
var errTruncated = errors.New("truncated JSON")

// decodeAny turns an attribute value into plain Go values. A string is parsed as JSON when
// asJSON is set (semconv allows JSON strings where structured values are expected); numbers in
// parsed JSON stay json.Number so that re-encoding keeps their text.
func decodeAny(v pcommon.Value, asJSON bool) (any, error) {
	if v.Type() == pcommon.ValueTypeStr && asJSON {
		return parseJSON(v.Str())
	}
	return v.AsRaw(), nil
}

// parseJSON parses s as one JSON value (JSON whitespace before it, any Unicode whitespace after
// it) into plain Go values, numbers as json.Number. jsonany decodes it when it can, with the
// same result; otherwise encoding/json gives the value or the error.
func parseJSON(s string) (any, error) {
	return parseJSONWith(s, jsonany.Decode)
}

// schemaMembers are the members of a recorded tool definition that toolDefinition only writes
// back as text: the schema, most of the definition.
var schemaMembers = []string{"parameters", "input_schema"}

// parseToolJSON is parseJSON for recorded tool definitions: their schemas come back as
// jsonany.Text, which text writes as the schema's tree would be written, without building it.
func parseToolJSON(s string) (any, error) {
	return parseJSONWith(s, func(t string) (any, bool) { return jsonany.DecodeKeeping(t, schemaMembers...) })
}

// parseJSONWith is parseJSON with decode, one of jsonany's decoders, for the fast path; what
// it declines goes to encoding/json.
func parseJSONWith(s string, decode func(string) (any, bool)) (any, error) {
	if v, ok := decode(jsonText(s)); ok {
		return v, nil
	}
	return parseJSONStd(s)
}

// jsonText is s as jsonany takes it. encoding/json's Decoder stops after the value and
// parseJSONStd ignores Unicode whitespace left after it; jsonany takes only JSON whitespace, so
// that trailing run is cut first (the value itself never ends in whitespace).
func jsonText(s string) string {
	return strings.TrimRightFunc(s, unicode.IsSpace)
}

// decodeToolJSON is decodeAny for recorded tool definitions (parseToolJSON).
func decodeToolJSON(v pcommon.Value) (any, error) {
	if v.Type() == pcommon.ValueTypeStr {
		return parseToolJSON(v.Str())
	}
	return decodeAny(v, true)
}

// parseJSONStd is parseJSON with encoding/json alone: the fallback, and the reference the fuzz
// test compares parseJSON with.
func parseJSONStd(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %d bytes", errTruncated, len(s))
		}
		return nil, err
	}
	// dec.More is false before a closing ] or }, so look at what is left instead.
	if rest := strings.TrimSpace(s[dec.InputOffset():]); rest != "" {
		return nil, errors.New("trailing data after JSON value")
	}
	return out, nil
}

// text renders a value as the text a replay needs: strings as they are, anything else as JSON.
func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	}
	if s, err := jsonany.Marshal(v); err == nil {
		return s
	}
	return fmt.Sprint(v)
}

func toInt(v any) (int64, bool) {
	switch t := v.(type) {
	case int64:
		return t, true
	case float64:
		return int64(t), t == float64(int64(t))
	case json.Number:
		n, err := t.Int64()
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		return f, err == nil
	}
	return 0, false
}

func mapStr(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			if s := text(v); s != "" {
				return s
			}
		}
	}
	return ""
}

func errNotArray(raw any) error { return fmt.Errorf("want an array, got %T", raw) }
