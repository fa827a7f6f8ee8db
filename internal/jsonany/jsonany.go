// Package jsonany decodes JSON text into the plain Go values that encoding/json's Decoder with
// UseNumber gives for an `any` (map[string]any, []any, string, json.Number, bool, nil), with a
// token reader (jsontext) instead of encoding/json's reflection: the scrubber and the normalizer
// parse every JSON attribute of every span (messages, tool schemas, parameters), and
// encoding/json was a tenth of the collector's CPU there.
//
// It decodes only what it is sure to decode exactly as encoding/json does and says so; for
// everything else the caller runs encoding/json, which then gives the value or the error:
//   - invalid UTF-8 anywhere in the text: encoding/json replaces it with U+FFFD inside strings and
//     rejects it elsewhere; one utf8.ValidString check keeps that class out;
//   - a surrogate escape that is not part of a pair (`\ud800`): encoding/json writes U+FFFD,
//     jsontext rejects it by default, so it comes back here as not decoded;
//   - nesting deeper than maxDepth: encoding/json's limit (10000) errors, shallower values are
//     the same; keeping the recursion short also bounds the stack;
//   - any syntax error, trailing data or truncation: the caller needs encoding/json's own error.
//
// Duplicate object keys are allowed and the last one wins, as in encoding/json.
package jsonany

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// maxDepth is the deepest nesting decoded here; deeper values go to encoding/json (limit 10000).
const maxDepth = 1000

// maxPooledInput is the largest input copy kept for reuse: a multi-megabyte tool result is not
// worth holding on to.
const maxPooledInput = 1 << 20

// reader is one decoder with its input buffer, reused through readers.
type reader struct {
	input []byte
	buf   bytes.Buffer
	dec   jsontext.Decoder
}

var readers = sync.Pool{New: func() any { return new(reader) }}

// Decode returns the value of text, which must be exactly one JSON value with only JSON
// whitespace (space, tab, CR, LF) around it, as encoding/json's Decoder with UseNumber decodes
// it into an `any`. ok is false when text is not such a value or holds something this package
// leaves to encoding/json (see the package comment): the caller then decodes it with
// encoding/json. The returned value shares no memory with text or with other calls.
func Decode(text string) (v any, ok bool) {
	if !utf8.ValidString(text) {
		return nil, false
	}
	r := readers.Get().(*reader)
	defer func() {
		if cap(r.input) <= maxPooledInput {
			readers.Put(r)
		}
	}()
	// A copy, not the string's own bytes: the decoder reads from a bytes.Buffer without copying,
	// and a string's memory must never be reachable as a []byte. Every decoded string is copied
	// out of it again (Token.String), so the tree does not hold on to the buffer.
	r.input = append(r.input[:0], text...)
	r.buf = *bytes.NewBuffer(r.input)
	r.dec.Reset(&r.buf, jsontext.AllowDuplicateNames(true))
	v, ok = value(&r.dec, 0)
	if !ok {
		return nil, false
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		return nil, false // trailing data, or a second value
	}
	return v, true
}

// value reads the next value, depth levels down.
func value(dec *jsontext.Decoder, depth int) (any, bool) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, false
	}
	switch tok.Kind() {
	case 'n':
		return nil, true
	case 'f', 't':
		return tok.Bool(), true
	case '"':
		return tok.String(), true
	case '0':
		return json.Number(tok.String()), true // the number's text as written
	case '{':
		if depth >= maxDepth {
			return nil, false
		}
		return object(dec, depth+1)
	case '[':
		if depth >= maxDepth {
			return nil, false
		}
		return array(dec, depth+1)
	}
	return nil, false
}

// object reads the members of an object after its '{', up to and including its '}'.
func object(dec *jsontext.Decoder, depth int) (any, bool) {
	m := map[string]any{}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		name := tok.String() // before the next read, which invalidates tok
		v, ok := value(dec, depth)
		if !ok {
			return nil, false
		}
		m[name] = v // a key given twice: the last value wins, as in encoding/json
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, false
	}
	return m, true
}

// array reads the elements of an array after its '[', up to and including its ']'.
func array(dec *jsontext.Decoder, depth int) (any, bool) {
	a := []any{}
	for {
		switch dec.PeekKind() {
		case ']':
			if _, err := dec.ReadToken(); err != nil {
				return nil, false
			}
			return a, true
		case 0, '}':
			return nil, false // an error, or a mismatched close
		}
		v, ok := value(dec, depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
	}
}
