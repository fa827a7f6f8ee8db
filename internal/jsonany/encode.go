package jsonany

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encode returns the JSON text of v exactly as encoding/json's Encoder with SetEscapeHTML(false)
// writes it, without the newline the Encoder adds: object members in the byte order of their
// names, strings escaped as encoding/json escapes them (invalid UTF-8 as \ufffd, U+2028 and
// U+2029 escaped). The normalizer and the request parsers store every tool schema, argument
// list and structured content in that form; encoding/json reaches it by reflection and by
// sorting reflect.Values, which cost more than decoding the text in the first place.
//
// It takes the values Decode and DecodeKeeping return (map[string]any, []any, string,
// json.Number, bool, nil, and Text, written as it is); ok is false for anything else (a
// float64, an int64, bytes) and for a json.Number that is not a JSON number, which
// encoding/json rejects: the caller then uses encoding/json.
func Encode(v any) (text string, ok bool) {
	w := writers.Get().(*writer)
	buf, ok := w.value(w.buf[:0], v, 0)
	if ok {
		text = string(buf)
	}
	w.release(buf)
	return text, ok
}

// Marshal returns the JSON text of v as encoding/json's Encoder with SetEscapeHTML(false) writes
// it, without the trailing newline: through Encode when it takes v, else through encoding/json,
// which then gives the text or the error.
func Marshal(v any) (string, error) {
	if text, ok := Encode(v); ok {
		return text, nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// writer is Encode's scratch space, reused through writers.
type writer struct {
	buf   []byte
	names []string // object member names being sorted, a stack shared by nested objects
}

var writers = sync.Pool{New: func() any { return new(writer) }}

// release keeps the output buffer for the next call unless one very large value grew it.
func (w *writer) release(buf []byte) {
	w.buf = buf[:0]
	clear(w.names)
	w.names = w.names[:0]
	if cap(w.buf) <= maxPooledInput && cap(w.names) <= maxPooledStack {
		writers.Put(w)
	}
}

// value appends the encoding of v, depth levels down.
func (w *writer) value(dst []byte, v any, depth int) ([]byte, bool) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		if t {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case string:
		return AppendString(dst, t), true
	case Text:
		return append(dst, t...), true // written by Canonical
	case json.Number:
		s := t.String()
		if s == "" {
			s = "0" // as encoding/json writes the zero Number
		}
		if !validNumber(s) {
			return dst, false
		}
		return append(dst, s...), true
	case map[string]any:
		if t == nil {
			return append(dst, "null"...), true
		}
		if depth >= maxDepth {
			return dst, false
		}
		return w.object(dst, t, depth+1)
	case []any:
		if t == nil {
			return append(dst, "null"...), true
		}
		if depth >= maxDepth {
			return dst, false
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = w.value(dst, e, depth+1); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	return dst, false
}

// object appends m with its members in the byte order of their names, as encoding/json sorts
// a map's keys.
func (w *writer) object(dst []byte, m map[string]any, depth int) ([]byte, bool) {
	base := len(w.names)
	for name := range m {
		w.names = append(w.names, name)
	}
	names := w.names[base:]
	slices.SortFunc(names, strings.Compare)
	dst = append(dst, '{')
	ok := true
	for i, name := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, name)
		dst = append(dst, ':')
		if dst, ok = w.value(dst, m[name], depth); !ok {
			break
		}
	}
	clear(w.names[base:]) // nested objects truncated it back to here, but may have moved it
	w.names = w.names[:base]
	return append(dst, '}'), ok
}

const hexDigits = "0123456789abcdef"

// AppendString appends s quoted as encoding/json quotes a string without HTML escaping:
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func AppendString[Text []byte | string](dst []byte, s Text) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		// A rune at most: the conversion of so few bytes stays on the stack.
		c, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// validNumber reports whether s is a JSON number (RFC 8259, section 6), the check
// encoding/json makes before it writes a json.Number.
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = skipDigits(s[1:])
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && isDigit(s[1]) {
		s = skipDigits(s[2:])
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		if !isDigit(s[0]) {
			return false
		}
		s = skipDigits(s[1:])
	}
	return s == ""
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

func skipDigits(s string) string {
	for s != "" && isDigit(s[0]) {
		s = s[1:]
	}
	return s
}
