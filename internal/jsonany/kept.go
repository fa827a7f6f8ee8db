package jsonany

import "slices"

// Text is the JSON text of an object or array that DecodeKeeping did not build, as Canonical
// writes it. Encode writes it as it is, and so does encoding/json (MarshalJSON), so a tree
// holding it is written as the tree it stands for would be.
type Text string

// MarshalJSON returns t as it is: it is JSON text already.
func (t Text) MarshalJSON() ([]byte, error) { return []byte(t), nil }

// DecodeKeeping is Decode, except that an object or array under a member named in kept comes
// back as its Text instead of a tree. A recorded tool definition is read for its name and
// description, and its schema, most of its text, is kept only as text: building the schema
// just to write it back cost more than the rest of the definition. Members inside a kept value
// are part of its text. ok is false when Decode's would be.
func DecodeKeeping(text string, kept ...string) (v any, ok bool) {
	return decodeText(text, func(r *reader) (any, bool) {
		r.kept = kept
		return r.value(0)
	})
}

// keptValue reads the value of a member named name, depth levels down, as its Text when
// DecodeKeeping keeps it: kept reports whether it did; ok is false when the value could not be
// read, or is one Decode would leave to encoding/json.
func (r *reader) keptValue(name string, depth int) (v any, kept, ok bool) {
	if len(r.kept) == 0 || !slices.Contains(r.kept, name) {
		return nil, false, true
	}
	if k := r.dec.PeekKind(); k != '{' && k != '[' {
		return nil, false, true
	}
	text, ok := r.canonical(depth) // from the same tokens: the value is read once
	return Text(text), true, ok
}
