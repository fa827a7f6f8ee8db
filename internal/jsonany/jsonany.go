// Package jsonany decodes JSON text into the plain Go values that encoding/json's Decoder with
// UseNumber gives for an `any` (map[string]any, []any, string, json.Number, bool, nil), with a
// token reader (jsontext, the encoding/json/v2 tokenizer) instead of encoding/json's reflection:
// the scrubber and the normalizer parse every JSON attribute of every span (messages, tool
// schemas, parameters), and with encoding/json that was about a tenth of the collector's CPU.
// Encode and Canonical write such values back as encoding/json does (encode.go, canonical.go),
// and DecodeFields builds only the members of an object a caller reads (fields.go).
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
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// maxDepth is the deepest nesting decoded here; deeper values go to encoding/json (limit 10000).
const maxDepth = 1000

// A reader is kept for reuse only while its scratch space is this small: a multi-megabyte tool
// result or an array of a million numbers is not worth holding on to.
const (
	maxPooledInput = 1 << 20
	maxPooledStack = 1 << 14
)

// Short strings (keys such as "role" and "content", values such as "user" or "object") repeat
// from value to value: a reader keeps up to maxShared of them, each up to maxSharedLen bytes,
// already boxed as `any`, and hands out the same immutable value again instead of allocating.
const (
	maxShared    = 1024
	maxSharedLen = 32
)

// reader is one decoder with its scratch space, reused through readers.
type reader struct {
	buf bytes.Buffer // a copy of the text being decoded
	dec jsontext.Decoder
	// members and elements are stacks of the objects' and arrays' contents being read: each
	// object or array is allocated once at its final size when its end is reached.
	members  []member
	elements []any
	shared   map[string]any // short strings seen before, boxed
	unquoted []byte         // a string with escapes, unescaped
	kept     []string       // names whose object or array values DecodeKeeping keeps as Text
	// out, sorted and spans are where Canonical and DecodeKeeping write canonical text
	// (canonical.go).
	out, sorted []byte
	spans       []canonicalMember
	// duplicate is set when an object gives a name twice (DecodeWithDuplicates).
	duplicate bool
}

type member struct {
	name  string
	value any
}

var readers = sync.Pool{New: func() any { return &reader{shared: make(map[string]any)} }}

// Decode returns the value of text, which must be exactly one JSON value with only JSON
// whitespace (space, tab, CR, LF) around it, as encoding/json's Decoder with UseNumber decodes
// it into an `any`. ok is false when text is not such a value or holds something this package
// leaves to encoding/json (see the package comment): the caller then decodes it with
// encoding/json. The returned value shares no mutable memory with text or with other calls
// (strings are immutable, so short ones may be the same string in several results).
func Decode(text string) (v any, ok bool) {
	return decodeText(text, func(r *reader) (any, bool) { return r.value(0) })
}

// DecodeWithDuplicates is Decode, and tells whether an object in text gives a name twice: the
// value keeps the last of them, as encoding/json does, while the text holds them all, so a
// reader that must see every value (the scrubber) reads such a text as text.
func DecodeWithDuplicates(text string) (v any, duplicates, ok bool) {
	v, ok = decodeText(text, func(r *reader) (any, bool) {
		r.duplicate = false
		v, ok := r.value(0)
		duplicates = r.duplicate
		return v, ok
	})
	return v, duplicates, ok
}

// decodeText runs read over text with a pooled reader and requires the end of the text after
// what read consumed.
func decodeText[T any](text string, read func(*reader) (T, bool)) (v T, ok bool) {
	if !utf8.ValidString(text) {
		return v, false
	}
	r := readers.Get().(*reader)
	// A copy, not the string's own bytes: the decoder reads from a bytes.Buffer without copying,
	// and a string's memory must never be reachable as a []byte. Every decoded string is copied
	// out of it, so the result does not hold on to the buffer.
	r.buf.Reset()
	r.buf.WriteString(text)
	return decodeBuffered(r, read)
}

// decodeBytes is decodeText for text held as bytes, which are copied as a string's are: the
// caller may reuse them.
func decodeBytes[T any](text []byte, read func(*reader) (T, bool)) (v T, ok bool) {
	if !utf8.Valid(text) {
		return v, false
	}
	r := readers.Get().(*reader)
	r.buf.Reset()
	r.buf.Write(text)
	return decodeBuffered(r, read)
}

// decodeBuffered runs read over the text in r.buf, requires its end after what read consumed,
// and puts r back into readers.
func decodeBuffered[T any](r *reader, read func(*reader) (T, bool)) (v T, ok bool) {
	r.dec.Reset(&r.buf, jsontext.AllowDuplicateNames(true))
	v, ok = read(r)
	if ok {
		_, err := r.dec.ReadToken()
		ok = err == io.EOF // else trailing data, or a second value
	}
	r.release()
	if !ok {
		var none T
		return none, false
	}
	return v, true
}

// release drops the reader's references into the result and puts it back into readers.
func (r *reader) release() {
	// object and array clear what they pop, so only what a failed decode left pushed holds
	// references: clearing up to the capacity would cost every call the largest value seen.
	clear(r.members)
	clear(r.elements)
	r.members, r.elements = r.members[:0], r.elements[:0]
	r.kept = nil
	if len(r.shared) >= maxShared {
		clear(r.shared)
	}
	r.spans = r.spans[:0] // offsets only: nothing to clear
	if r.buf.Cap() <= maxPooledInput && cap(r.out) <= maxPooledInput && cap(r.sorted) <= maxPooledInput &&
		cap(r.members) <= maxPooledStack && cap(r.elements) <= maxPooledStack && cap(r.spans) <= maxPooledStack {
		readers.Put(r)
	}
}

// value reads the next value, depth levels down.
func (r *reader) value(depth int) (any, bool) {
	switch r.dec.PeekKind() {
	case '"':
		raw, err := r.dec.ReadValue()
		if err != nil {
			return nil, false
		}
		return r.str(raw)
	case '0':
		raw, err := r.dec.ReadValue()
		if err != nil {
			return nil, false
		}
		return json.Number(raw), true // the number's text as written (a copy)
	case '{', '[':
		if depth >= maxDepth {
			return nil, false
		}
		tok, err := r.dec.ReadToken()
		if err != nil {
			return nil, false
		}
		if tok.Kind() == '{' {
			return r.object(depth+1, nil)
		}
		return r.array(depth + 1)
	}
	tok, err := r.dec.ReadToken()
	if err != nil {
		return nil, false
	}
	switch tok.Kind() {
	case 'n':
		return nil, true
	case 'f', 't':
		return tok.Bool(), true
	}
	return nil, false
}

// str returns the string raw (a quoted JSON string) holds, boxed.
func (r *reader) str(raw jsontext.Value) (any, bool) {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 {
		b, err := jsontext.AppendUnquote(r.unquoted[:0], raw)
		if err != nil {
			return nil, false
		}
		r.unquoted = b
		return string(b), true
	}
	if len(body) > maxSharedLen {
		return string(body), true
	}
	if v, ok := r.shared[string(body)]; ok {
		return v, true
	}
	var v any = string(body)
	if len(r.shared) < maxShared { // a map keeps its buckets when cleared: bound it as it fills
		r.shared[v.(string)] = v
	}
	return v, true
}

// object reads the members of an object after its '{', up to and including its '}'. With only
// not nil, it keeps the members named there and checks the others without building them.
func (r *reader) object(depth int, only []string) (any, bool) {
	base := len(r.members)
	for r.dec.PeekKind() == '"' {
		raw, err := r.dec.ReadValue()
		if err != nil {
			return nil, false
		}
		name, ok := r.str(raw) // before the next read, which invalidates raw
		if !ok {
			return nil, false
		}
		if only != nil && !slices.Contains(only, name.(string)) {
			if r.dec.SkipValue() != nil {
				return nil, false
			}
			continue
		}
		v, kept, ok := r.keptValue(name.(string), depth)
		if !kept {
			v, ok = r.value(depth)
		}
		if !ok {
			return nil, false
		}
		r.members = append(r.members, member{name.(string), v})
	}
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, false
	}
	m := make(map[string]any, len(r.members)-base)
	for _, kv := range r.members[base:] {
		m[kv.name] = kv.value // in order: of a key given twice, the last value wins, as in encoding/json
	}
	if len(m) < len(r.members)-base {
		r.duplicate = true
	}
	clear(r.members[base:])
	r.members = r.members[:base]
	return m, true
}

// array reads the elements of an array after its '[', up to and including its ']'.
func (r *reader) array(depth int) (any, bool) {
	base := len(r.elements)
	for {
		switch r.dec.PeekKind() {
		case ']':
			if _, err := r.dec.ReadToken(); err != nil {
				return nil, false
			}
			a := make([]any, len(r.elements)-base)
			copy(a, r.elements[base:])
			clear(r.elements[base:])
			r.elements = r.elements[:base]
			return a, true
		case 0, '}':
			return nil, false // an error, or a mismatched close
		}
		v, ok := r.value(depth)
		if !ok {
			return nil, false
		}
		r.elements = append(r.elements, v)
	}
}
