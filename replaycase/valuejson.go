package replaycase

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/jsonany"
)

// appendValueJSON appends v as the JSON that json.Marshal(v.AsRaw()) writes, up to key order,
// number spelling and string escapes, which json.Unmarshal does not see: strings with invalid UTF-8 get U+FFFD,
// bytes are base64 (null when empty), an empty value is null, and NaN or ±Inf is an error. Decoding the case
// spans reads every structured attribute this way; going through AsRaw built a map[string]any
// tree per attribute and json.Marshal then sorted its keys, about half of the exporter's decoding.
func appendValueJSON(b []byte, v pcommon.Value) ([]byte, error) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return jsonany.AppendString(b, v.Str()), nil
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
			b = append(jsonany.AppendString(b, k), ':')
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

// jsonBuffers holds the scratch buffers of getJSON: one per concurrent decode, reused.
var jsonBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledJSON is the largest scratch buffer put back into jsonBuffers.
const maxPooledJSON = 1 << 20
