package replaycase

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// appendValueJSON appends v as the JSON that json.Marshal(v.AsRaw()) writes, up to key order and
// number spelling, which json.Unmarshal does not see: strings with invalid UTF-8 get U+FFFD,
// bytes are base64 (null when empty), an empty value is null, and NaN or ±Inf is an error. Decoding the case
// spans reads every structured attribute this way; going through AsRaw built a map[string]any
// tree per attribute and json.Marshal then sorted its keys, about half of the exporter's decoding.
func appendValueJSON(b []byte, v pcommon.Value) ([]byte, error) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendJSONString(b, v.Str()), nil
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), nil
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(b, v.Bool()), nil
	case pcommon.ValueTypeBytes:
		if v.Bytes().Len() == 0 {
			return append(b, "null"...), nil // AsRaw gives a nil slice, which json.Marshal writes as null
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bytes().AsRaw())
		return append(b, '"'), nil
	case pcommon.ValueTypeMap:
		b = append(b, '{')
		first := true
		var err error
		for k, e := range v.Map().All() {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(appendJSONString(b, k), ':')
			if b, err = appendValueJSON(b, e); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case pcommon.ValueTypeSlice:
		b = append(b, '[')
		var err error
		for i, e := range v.Slice().All() {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValueJSON(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	default:
		return append(b, "null"...), nil
	}
}

// appendJSONString appends s as a JSON string. Control characters, quote and backslash are
// escaped; invalid UTF-8 becomes U+FFFD, as json.Marshal does.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jsonBuffers holds the scratch buffers of getJSON: one per concurrent decode, reused.
var jsonBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledJSON is the largest scratch buffer put back into jsonBuffers.
const maxPooledJSON = 1 << 20
