package scrub

import (
	"encoding/json"
	"strings"
)

// A Python triple-quoted string (`client_key = """…"""`, `password = '''…'''`) may span lines,
// and the assignment pattern takes its opening `""` for an empty value: under a secret name or a
// name of key material its whole text is masked here. A Python source in a JSON string in text
// (`"code": "client_key = \"\"\"MIIE…\"\"\"\n"`) has its double quotes escaped: `\"\"\"` opens
// and closes such a string too, and the value masked is its text with the JSON escapes decoded,
// the one the JSON walk sees when the same JSON is scanned whole.

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
		open, n := tripleQuoteAt(v, i)
		if n == 0 {
			i++
			continue
		}
		end, closed := tripleQuotedEnd(v, open, n)
		switch kind := s.tripleQuotedKind(v, open); {
		case kind != "" && end > open+n:
			out = append(out, span{start: open + n, end: end, kind: kind, value: tripleQuotedValue(v[open+n:end], n)})
		case !closed:
			i = open + n // a docstring that does not close: its text is scanned as any
			continue
		}
		if i = end + n; i >= len(v) {
			return out
		}
	}
}

// tripleQuoteAt returns where the triple quote whose first quote is v[i] opens and its length
// (0 for none): three double or single quotes, or three double quotes each escaped by the same
// backslashes in a JSON string (`\"\"\"`; `\\\"\\\"\\\"` in JSON in a JSON string).
func tripleQuoteAt(v string, i int) (open, n int) {
	k := backslashesBefore(v, i)
	if k > 0 && (v[i] != '"' || k&(k+1) != 0) {
		return i, 0 // a quote escaped once, three times, seven times…, or none
	}
	q := v[i-k : i+1]
	if open = i - k; open+3*len(q) <= len(v) && v[open+len(q):open+2*len(q)] == q && v[open+2*len(q):open+3*len(q)] == q {
		return open, 3 * len(q)
	}
	return i, 0
}

// tripleQuoteBefore returns where the triple quote that ends at v[start] opens and its length
// (tripleQuoteAt), or 0: the text of a triple-quoted string starts at v[start].
func tripleQuoteBefore(v string, start int) (open, n int) {
	if start == 0 || v[start-1] != '"' && v[start-1] != '\'' {
		return 0, 0
	}
	k := backslashesBefore(v, start-1)
	if open = start - 3*(k+1); open < 0 {
		return 0, 0
	}
	if at, n := tripleQuoteAt(v, open+k); at == open && n == 3*(k+1) {
		return open, n
	}
	return 0, 0
}

// backslashesBefore returns how many backslashes come right before v[i].
func backslashesBefore(v string, i int) int {
	k := 0
	for k < i && v[i-k-1] == '\\' {
		k++
	}
	return k
}

// tripleQuotedEnd returns where the text of the triple-quoted string opened at v[open] by n
// bytes of quotes ends: at its closing quotes, or at the end of v or maxTripleQuoted when none
// close it (false).
func tripleQuotedEnd(v string, open, n int) (int, bool) {
	from := open + n
	limit := min(len(v), from+maxTripleQuoted)
	if c := strings.Index(v[from:limit], v[open:from]); c >= 0 {
		return from + c, true
	}
	return limit, false
}

// tripleQuotedValue is what the placeholder of text, the text of a triple-quoted string opened by
// n bytes of quotes, hashes: in a JSON string (quotes escaped) the text with its escapes decoded,
// once for each level of JSON, or "" (the text as written). A text cut inside an escape is
// hashed as written.
func tripleQuotedValue(text string, n int) string {
	if n == 3 {
		return ""
	}
	decoded := text
	for k := n/3 - 1; k > 0; k /= 2 { // k backslashes before each quote: one level per bit
		if json.Unmarshal([]byte(`"`+decoded+`"`), &decoded) != nil {
			return ""
		}
	}
	return decoded
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
