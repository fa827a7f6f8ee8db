package scrub

import (
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON escapes in text. A string that is JSON as a whole is decoded before it is scanned, but
// JSON that is not whole (an attribute cut at the SDK's length limit, JSON quoted in prose or a
// log line) is scanned as text, escapes and all: in `"my key:\nsk-proj-…"` the `n` of `\n`
// touches the key, so rules that need a word boundary before a secret (OpenAI and AWS keys,
// cards, IBANs, SSNs, national phone numbers, IPv4) do not see it, and `m\u00fcller@…` or
// `alice\u0040example.com` is no e-mail address. The text is therefore also scanned with its
// escapes decoded; the findings are mapped back to the escaped bytes they stand for.

// hasEscape tells whether v may hold a JSON escape (a backslash); most strings hold none.
func hasEscape(v string) bool { return strings.IndexByte(v, '\\') >= 0 }

// needsPlainView tells whether plainView(v) can differ from v with its folding runes folded.
func needsPlainView(v string) bool { return hasEscape(v) || hasLookalike(v) }

// plainView is v with its JSON escapes decoded (\n, \t, \", \/, \uXXXX with surrogate
// pairs …) and its look-alike characters replaced (lookalike.go) and, for each byte of it and
// its end, the offset in v that byte comes from. A run of backslashes before the escaped
// character counts as one, so JSON in a JSON string (\\n, \\u00e9) is decoded too. A backslash
// that starts no escape is kept. The folding runes are folded as in foldWithOffsets.
func plainView(v string) (string, []int) {
	folded, foldAt := foldWithOffsets(v)
	out := make([]byte, 0, len(folded))
	at := make([]int, 0, len(folded)+1)
	for i := 0; i < len(folded); {
		r, n := escapeAt(folded, i)
		switch {
		case n == 0 && folded[i] >= utf8.RuneSelf:
			r, n = utf8.DecodeRuneInString(folded[i:])
			if _, ok := plainRune(r); !ok {
				out, at = append(out, folded[i:i+n]...), append(at, foldAt[i:i+n]...)
				i += n
				continue
			}
		case n == 0:
			// Not an escape: copy the byte, or the whole run of backslashes, so that a long run
			// is not looked through again from each of its bytes.
			for first := true; i < len(folded) && (first || folded[i] == '\\' && folded[i-1] == '\\'); first = false {
				out, at = append(out, folded[i]), append(at, foldAt[i])
				i++
			}
			continue
		}
		if p, ok := plainRune(r); ok {
			r = p
		}
		if r != dropRune {
			start := len(out)
			out = utf8.AppendRune(out, r)
			for range len(out) - start {
				at = append(at, foldAt[i])
			}
		}
		i += n
	}
	return string(out), append(at, len(v))
}

// escapeAt decodes the escape at v[i] (a run of backslashes and what it escapes): the rune and
// the bytes it takes, or 0 bytes when v[i] starts no escape.
func escapeAt(v string, i int) (rune, int) {
	j := i
	for j < len(v) && v[j] == '\\' {
		j++
	}
	if j == i || j == len(v) {
		return 0, 0
	}
	switch c := v[j]; c {
	case '"', '/', '\'':
		return rune(c), j + 1 - i
	case 'b':
		return '\b', j + 1 - i
	case 'f':
		return '\f', j + 1 - i
	case 'n':
		return '\n', j + 1 - i
	case 'r':
		return '\r', j + 1 - i
	case 't':
		return '\t', j + 1 - i
	case 'u':
		r, ok := hex4(v, j+1)
		if !ok {
			return 0, 0
		}
		end := j + 5
		if utf16.IsSurrogate(r) {
			// The low half of a pair is a second escape: \ud83d\ude00.
			k := end
			for k < len(v) && v[k] == '\\' {
				k++
			}
			if k > end && k < len(v) && v[k] == 'u' {
				if r2, ok := hex4(v, k+1); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						return pair, k + 5 - i
					}
				}
			}
			return utf8.RuneError, end - i
		}
		return r, end - i
	}
	return 0, 0
}

// hex4 reads four hex digits at v[i].
func hex4(v string, i int) (rune, bool) {
	if i+4 > len(v) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(v[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// unionSpans merges two lists of findings in the same string (each sorted, without overlaps)
// into one: overlapping findings become one, with the kind of the one that starts first (of a,
// at the same start).
func unionSpans(a, b []span) []span {
	if len(b) == 0 {
		return a
	}
	all := append(append(make([]span, 0, len(a)+len(b)), a...), b...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].start < all[j].start })
	out := all[:1]
	for _, f := range all[1:] {
		if last := &out[len(out)-1]; f.start < last.end {
			if f.end > last.end {
				last.end, last.value = f.end, ""
			}
			continue
		}
		out = append(out, f)
	}
	return out
}
