package scrub

import "strings"

// A Python triple-quoted string (`client_key = """…"""`, `password = '''…'''`) may span lines,
// and the assignment pattern takes its opening `""` for an empty value: under a secret name or a
// name of key material its whole text is masked here.

// maxTripleQuoted bounds the text of a triple-quoted string: a key of a few KiB fits. The search
// for the closing quotes stops there, and the scan goes on after them, so the work is one pass.
const maxTripleQuoted = 64 << 10

// tripleQuotedSpans returns a span for the text of each triple-quoted string in v written after
// a secret name or a name of key material (`name = `, `name: `); one that does not close within
// maxTripleQuoted (a cut text) is masked to the end of v or the bound.
func (s *Scrubber) tripleQuotedSpans(v string) []span {
	var out []span
	for i := 0; ; {
		q := strings.IndexAny(v[i:], `"'`)
		if q < 0 {
			return out
		}
		i += q
		if !tripleQuote(v, i) {
			i++
			continue
		}
		end, closed := tripleQuotedEnd(v, i)
		switch kind := s.tripleQuotedKind(v, i); {
		case kind != "" && end > i+3:
			out = append(out, span{start: i + 3, end: end, kind: kind})
		case !closed:
			i += 3 // a docstring that does not close: its text is scanned as any
			continue
		}
		if i = end + 3; i >= len(v) {
			return out
		}
	}
}

// tripleQuote tells whether v[i:] starts with three double quotes or three single quotes.
func tripleQuote(v string, i int) bool {
	return i+3 <= len(v) && (v[i] == '"' || v[i] == '\'') && v[i+1] == v[i] && v[i+2] == v[i]
}

// tripleQuotedEnd returns where the text of the triple-quoted string opened at v[open] ends:
// at its closing quotes, or at the end of v or maxTripleQuoted when none close it (false).
func tripleQuotedEnd(v string, open int) (int, bool) {
	from := open + 3
	limit := min(len(v), from+maxTripleQuoted)
	if c := strings.Index(v[from:limit], v[open:from]); c >= 0 {
		return from + c, true
	}
	return limit, false
}

// tripleQuotedKind returns the kind under which the triple-quoted string opened at v[open] is
// masked: its name's (kindOf), secret_field under a name of key material, or "".
func (s *Scrubber) tripleQuotedKind(v string, open int) string {
	name := nameBefore(v, open-stringPrefix(v, open))
	if kind := s.kindOf(name); kind != "" {
		return kind
	}
	if nameEndsIn(name, keyMaterialEndings) {
		return KindSecretField
	}
	return ""
}

// stringPrefix returns the length of the Python string prefix (r, b, u, f, rb, br, …, any case)
// before the quote at v[i], 0 when there is none: in `key = r"""…"""` the name is before the r.
func stringPrefix(v string, i int) int {
	n := 0
	for n < 2 && i-n > 0 && strings.IndexByte("rRbBuUfF", v[i-n-1]) >= 0 {
		n++
	}
	if i-n > 0 && isKeyByte(v[i-n-1]) {
		return 0 // the end of a word, not a prefix
	}
	return n
}
