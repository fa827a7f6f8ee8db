package jsonany

import (
	"bytes"
	"io"
	"slices"
	"sync"
	"unicode/utf8"

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
	if !utf8.Valid(raw) {
		return "", false
	}
	c := canonicalizers.Get().(*canonicalizer)
	c.in.Reset()
	c.in.Write(raw) // a copy: the decoder keeps reading from its buffer after raw is reused
	c.dec.Reset(&c.in, jsontext.AllowDuplicateNames(true))
	c.out = c.out[:0]
	ok = c.value(0)
	if ok {
		_, err := c.dec.ReadToken()
		ok = err == io.EOF // else trailing data, or a second value
	}
	if ok {
		text = string(c.out)
	}
	c.release()
	return text, ok
}

// canonicalizer is Canonical's scratch space, reused through canonicalizers.
type canonicalizer struct {
	in  bytes.Buffer
	dec jsontext.Decoder
	// out is the result so far. An object's members are written into it in the order they
	// come, each name unquoted and its value already canonical, and then rewritten sorted
	// (through sorted) over the same bytes once the object ends.
	out      []byte
	sorted   []byte
	members  []canonicalMember // a stack shared by nested objects
	unquoted []byte
}

// canonicalMember locates one member of an object being read in out: its unquoted name at
// out[name:value], its canonical value at out[value:end].
type canonicalMember struct{ name, value, end int }

var canonicalizers = sync.Pool{New: func() any { return new(canonicalizer) }}

func (c *canonicalizer) release() {
	c.members = c.members[:0]
	if c.in.Cap() <= maxPooledInput && cap(c.out) <= maxPooledInput && cap(c.sorted) <= maxPooledInput &&
		cap(c.members) <= maxPooledStack {
		canonicalizers.Put(c)
	}
}

// value appends the next value, depth levels down, to out.
func (c *canonicalizer) value(depth int) bool {
	switch c.dec.PeekKind() {
	case '"':
		raw, err := c.dec.ReadValue()
		if err != nil {
			return false
		}
		return c.str(raw)
	case '0':
		raw, err := c.dec.ReadValue()
		if err != nil {
			return false
		}
		c.out = append(c.out, raw...) // a number as written, as json.Number keeps it
		return true
	case '{', '[':
		if depth >= maxDepth {
			return false
		}
		tok, err := c.dec.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() == '{' {
			return c.object(depth + 1)
		}
		return c.array(depth + 1)
	}
	tok, err := c.dec.ReadToken()
	if err != nil {
		return false
	}
	switch tok.Kind() {
	case 'n':
		c.out = append(c.out, "null"...)
	case 'f':
		c.out = append(c.out, "false"...)
	case 't':
		c.out = append(c.out, "true"...)
	default:
		return false
	}
	return true
}

// str appends the string raw (a quoted JSON string) holds, quoted as Encode quotes it. Without
// a backslash or a line or paragraph separator, raw is that quoting already.
func (c *canonicalizer) str(raw jsontext.Value) bool {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && !bytes.Contains(body, lineSeparator) && !bytes.Contains(body, paragraphSeparator) {
		c.out = append(c.out, raw...)
		return true
	}
	s, err := jsontext.AppendUnquote(c.unquoted[:0], raw)
	if err != nil {
		return false
	}
	c.unquoted = s
	c.out = appendString(c.out, s)
	return true
}

var (
	lineSeparator      = []byte("\u2028")
	paragraphSeparator = []byte("\u2029")
)

// array appends an array after its '[', up to and including its ']'.
func (c *canonicalizer) array(depth int) bool {
	c.out = append(c.out, '[')
	for first := true; ; first = false {
		switch c.dec.PeekKind() {
		case ']':
			if _, err := c.dec.ReadToken(); err != nil {
				return false
			}
			c.out = append(c.out, ']')
			return true
		case 0, '}':
			return false // an error, or a mismatched close
		}
		if !first {
			c.out = append(c.out, ',')
		}
		if !c.value(depth) {
			return false
		}
	}
}

// object appends an object after its '{', up to and including its '}', with its members
// sorted by name.
func (c *canonicalizer) object(depth int) bool {
	start, base := len(c.out), len(c.members)
	for c.dec.PeekKind() == '"' {
		raw, err := c.dec.ReadValue()
		if err != nil {
			return false
		}
		name := len(c.out)
		if c.out, err = jsontext.AppendUnquote(c.out, raw); err != nil {
			return false
		}
		value := len(c.out)
		if !c.value(depth) {
			return false
		}
		c.members = append(c.members, canonicalMember{name, value, len(c.out)})
	}
	if tok, err := c.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return false
	}
	members := c.members[base:]
	// Stable, so that of a name given twice the last comes last and is the one kept.
	slices.SortStableFunc(members, func(a, b canonicalMember) int {
		return bytes.Compare(c.out[a.name:a.value], c.out[b.name:b.value])
	})
	sorted := append(c.sorted[:0], '{')
	for i, m := range members {
		name := c.out[m.name:m.value]
		if i+1 < len(members) && bytes.Equal(name, c.out[members[i+1].name:members[i+1].value]) {
			continue // a later member has the same name and wins
		}
		if len(sorted) > 1 {
			sorted = append(sorted, ',')
		}
		sorted = appendString(sorted, name)
		sorted = append(sorted, ':')
		sorted = append(sorted, c.out[m.value:m.end]...)
	}
	sorted = append(sorted, '}')
	c.sorted = sorted
	c.out = append(c.out[:start], sorted...)
	c.members = c.members[:base]
	return true
}
