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

// A value in parentheses under a secret name is, in Python, the strings inside it, read as one
// (implicit concatenation; black writes a long string so: `password = (⏎    "hunter2…"⏎)`,
// `DB_PASSWORD = ("s3cr3t" "more")`). They are masked together, from the first one's text to
// the last one's, with the placeholder of the string Python reads, the parts concatenated (as
// `password = "s3cr3tmore"` has), and the `(` is no value. A tuple (`password = ("a", "b")`)
// is such strings for each element, each masked as a list's element is. Wrapped key material
// so written under a name of key material is read by wrappedKeyEnd.

// parenthesizedStrings returns, for each element of the tuple that opens at v[open] ('('; one
// element when there is no comma), the span of its strings in quotes, each on one line (with
// spaces, line breaks and comments between them; a string prefix such as r is allowed), and as
// its value their texts concatenated; false when no string follows the '(' (a call, `(None)`:
// the pair rule reads it as before); no span when an escape or a triple-quoted string does
// (they are found in the text with its escapes decoded, and by tripleQuotedSpans). A string
// that does not close on its line (a cut text) is read to the line's end and ends the strings;
// so does what is no string (the ')', an operator, an element that is no string).
func parenthesizedStrings(v string, open int) ([]span, bool) {
	var out []span
	var read strings.Builder
	f := span{}
	for i := open + 1; ; {
		i = pythonSpaceEnd(v, i)
		if i < len(v) && v[i] == ',' && f.end > 0 {
			f.value = read.String() // the next element of a tuple
			out, f = append(out, f), span{}
			read.Reset()
			i = pythonSpaceEnd(v, i+1)
		}
		q := i
		for q < len(v) && q-i < 2 && strings.IndexByte("rRbBuUfF", v[q]) >= 0 {
			q++
		}
		if q == len(v) || v[q] != '"' && v[q] != '\'' {
			if _, n := escapeAt(v, q); n > 0 && f.end == 0 && len(out) == 0 && q == i {
				return nil, true // `(\n    \"…` in a JSON string: read with its escapes decoded (unescape.go)
			}
			break
		}
		if _, n := tripleQuoteAt(v, q); n > 0 {
			if f.end == 0 && len(out) == 0 {
				return nil, true // ("""…"""): tripleQuotedSpans reads its name through the '('
			}
			break
		}
		end, closed := pythonStringEnd(v, q)
		if n := placeholderLenAt(v, q+1); n > 0 {
			end, closed = q+1+n, false // strings masked: `'<secret:…>"` once quotes of both kinds were
		}
		if f.end == 0 {
			f.start = q + 1
		}
		f.end = end
		read.WriteString(v[q+1 : end])
		if !closed {
			break
		}
		i = end + 1
	}
	if f.end > 0 {
		f.value = read.String()
		out = append(out, f)
	}
	return out, len(out) > 0
}

// pythonStringEnd returns where the text of the string that the quote v[q] opens ends, at its
// closing quote (true; a backslash escapes the byte after it), or at the end of its line or of
// v (false).
func pythonStringEnd(v string, q int) (int, bool) {
	for j := q + 1; j < len(v); j++ {
		switch v[j] {
		case v[q]:
			return j, true
		case '\n', '\r':
			return j, false
		case '\\':
			j++
		}
	}
	return len(v), false
}

// pythonSpaceEnd returns the end of the spaces, line breaks and comments at v[i] (between the
// strings in parentheses).
func pythonSpaceEnd(v string, i int) int {
	for i < len(v) {
		switch v[i] {
		case ' ', '\t', '\r', '\n':
			i++
		case '#':
			for i < len(v) && v[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// placeholderLenAt returns the length of the placeholder at v[i], or 0.
func placeholderLenAt(v string, i int) int {
	if !strings.HasPrefix(v[i:], placeholderOpen) {
		return 0
	}
	if loc := placeholderPattern.FindStringIndex(v[i:min(len(v), i+maxPlaceholder)]); loc != nil && loc[0] == 0 {
		return loc[1]
	}
	return 0
}

// maxPlaceholder bounds the text placeholderLenAt reads: a placeholder with a rule's kind fits.
const maxPlaceholder = 256
