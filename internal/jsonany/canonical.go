package jsonany

import (
	"bytes"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Canonical returns what encoding/json gives for raw decoded with UseNumber into an `any` and
// encoded back with SetEscapeHTML(false): raw compacted, object members sorted by the bytes of
// their names (of a name given twice, the last), strings escaped as Encode escapes them,
// numbers as written. It is how the request parsers store a tool's schema, a call's arguments
// and structured content, and an agent offers the same schemas on every model call, so it
// writes the result straight from the tokens instead of building the tree Decode would.
//
// ok is false for the text Decode leaves to encoding/json (see the package comment): the
// caller then uses encoding/json, which gives the text or the error.
func Canonical(raw []byte) (text string, ok bool) {
	return decodeBytes(raw, func(r *reader) (string, bool) { return r.canonical(0) })
}

// canonicalMember locates one member of an object being written in the reader's out: its
// unquoted name at out[name:value], its canonical value at out[value:end].
type canonicalMember struct{ name, value, end int }

// canonical reads the next value, depth levels down, and returns its canonical text. An
// object's members are written into out in the order they come, each name unquoted and its
// value already canonical, and rewritten sorted (through sorted) over the same bytes once the
// object ends.
func (r *reader) canonical(depth int) (string, bool) {
	r.out = r.out[:0]
	if !r.canonicalValue(depth) {
		return "", false
	}
	return string(r.out), true
}

// canonicalValue appends the next value, depth levels down, to out.
func (r *reader) canonicalValue(depth int) bool {
	switch r.dec.PeekKind() {
	case '"':
		raw, err := r.dec.ReadValue()
		if err != nil {
			return false
		}
		return r.canonicalStr(raw)
	case '0':
		raw, err := r.dec.ReadValue()
		if err != nil {
			return false
		}
		r.out = append(r.out, raw...) // a number as written, as json.Number keeps it
		return true
	case '{', '[':
		if depth >= maxDepth {
			return false
		}
		tok, err := r.dec.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() == '{' {
			return r.canonicalObject(depth + 1)
		}
		return r.canonicalArray(depth + 1)
	}
	tok, err := r.dec.ReadToken()
	if err != nil {
		return false
	}
	switch tok.Kind() {
	case 'n':
		r.out = append(r.out, "null"...)
	case 'f':
		r.out = append(r.out, "false"...)
	case 't':
		r.out = append(r.out, "true"...)
	default:
		return false
	}
	return true
}

// canonicalStr appends the string raw (a quoted JSON string) holds, quoted as Encode quotes it.
// Without a backslash or a line or paragraph separator, raw is that quoting already.
func (r *reader) canonicalStr(raw jsontext.Value) bool {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && !bytes.Contains(body, lineSeparator) && !bytes.Contains(body, paragraphSeparator) {
		r.out = append(r.out, raw...)
		return true
	}
	s, err := jsontext.AppendUnquote(r.unquoted[:0], raw)
	if err != nil {
		return false
	}
	r.unquoted = s
	r.out = AppendString(r.out, s)
	return true
}

var (
	lineSeparator      = []byte("\u2028")
	paragraphSeparator = []byte("\u2029")
)

// canonicalArray appends an array after its '[', up to and including its ']'.
func (r *reader) canonicalArray(depth int) bool {
	r.out = append(r.out, '[')
	for first := true; ; first = false {
		switch r.dec.PeekKind() {
		case ']':
			if _, err := r.dec.ReadToken(); err != nil {
				return false
			}
			r.out = append(r.out, ']')
			return true
		case 0, '}':
			return false // an error, or a mismatched close
		}
		if !first {
			r.out = append(r.out, ',')
		}
		if !r.canonicalValue(depth) {
			return false
		}
	}
}

// canonicalObject appends an object after its '{', up to and including its '}', with its
// members sorted by name.
func (r *reader) canonicalObject(depth int) bool {
	start, base := len(r.out), len(r.spans)
	for r.dec.PeekKind() == '"' {
		raw, err := r.dec.ReadValue()
		if err != nil {
			return false
		}
		name := len(r.out)
		if r.out, err = jsontext.AppendUnquote(r.out, raw); err != nil {
			return false
		}
		value := len(r.out)
		if !r.canonicalValue(depth) {
			return false
		}
		r.spans = append(r.spans, canonicalMember{name, value, len(r.out)})
	}
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return false
	}
	members := r.spans[base:]
	// Stable, so that of a name given twice the last comes last and is the one kept.
	slices.SortStableFunc(members, func(a, b canonicalMember) int {
		return bytes.Compare(r.out[a.name:a.value], r.out[b.name:b.value])
	})
	sorted := append(r.sorted[:0], '{')
	for i, m := range members {
		name := r.out[m.name:m.value]
		if i+1 < len(members) && bytes.Equal(name, r.out[members[i+1].name:members[i+1].value]) {
			continue // a later member has the same name and wins
		}
		if len(sorted) > 1 {
			sorted = append(sorted, ',')
		}
		sorted = AppendString(sorted, name)
		sorted = append(sorted, ':')
		sorted = append(sorted, r.out[m.value:m.end]...)
	}
	sorted = append(sorted, '}')
	r.sorted = sorted
	r.out = append(r.out[:start], sorted...)
	r.spans = r.spans[:base]
	return true
}
