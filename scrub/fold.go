package scrub

import "strings"

// Folding: gitleaks looks for keywords (all ASCII) in the text lower-cased with
// strings.ToLower, key names are compared lower-cased the same way, and keywordIndex and the
// name: value rules fold ASCII letters only. Two runes outside ASCII lower-case to an ASCII
// letter (TestOnlyTwoRunesLowerCaseToASCII): the Kelvin sign to k, the dotted capital I to i.
const kelvin, dotI = "\u212a", "\u0130"

// foldingRunes are those two runes and the ASCII letter each folds to.
var foldingRunes = [...]struct {
	r      string
	letter byte
}{{kelvin, 'k'}, {dotI, 'i'}}

var toASCIILetter = func() *strings.Replacer {
	var oldNew []string
	for _, f := range foldingRunes {
		oldNew = append(oldNew, f.r, string(f.letter))
	}
	return strings.NewReplacer(oldNew...)
}()

// hasFoldingRune tells whether v holds one of foldingRunes (nearly never).
func hasFoldingRune(v string) bool {
	return strings.Contains(v, kelvin) || strings.Contains(v, dotI)
}

// asciiFolded is v with those two runes replaced by their ASCII letter; v itself, not a copy,
// when it holds neither (nearly always).
func asciiFolded(v string) string {
	if hasFoldingRune(v) {
		return toASCIILetter.Replace(v)
	}
	return v
}

// foldedSpans is spans of v as found in v with those two runes folded to their ASCII letter,
// in v's own offsets: key names are compared folded, so a text pair "api_\u212aey: …" or a
// keyword written with the Kelvin sign is found as it is as a key. Text with a backslash or a
// look-alike character is also scanned with its JSON escapes decoded and its look-alikes
// replaced (unescape.go, lookalike.go). depth counts the base64 decodings v comes from.
func (s *Scrubber) foldedSpans(v string, depth int) []span {
	plain := needsPlainView(v)
	if !hasFoldingRune(v) && !plain {
		return s.spans(v, depth)
	}
	var found []span
	if hasFoldingRune(v) {
		// Both: folded, the rune becomes a letter, and a letter before a value keeps it from
		// matching ("İsk-proj-…" folds to "isk-proj-…"), where as written it ends a word.
		view, at := foldWithOffsets(v)
		found = unionSpans(s.spans(v, depth), s.viewSpans(view, at, depth))
	} else {
		found = s.spans(v, depth)
	}
	if plain {
		view, at := plainView(v)
		found = unionSpans(found, s.viewSpans(view, at, depth))
	}
	return found
}

// viewSpans is spans of view, a view of a string, mapped back to the string's offsets (at),
// without any that maps to no byte of it.
func (s *Scrubber) viewSpans(view string, at []int, depth int) []span {
	found := s.spans(view, depth)
	kept := found[:0]
	for _, f := range found {
		if f.start, f.end = at[f.start], at[f.end]; f.end > f.start {
			kept = append(kept, f)
		}
	}
	return kept
}

// foldWithOffsets is asciiFolded(v) with, for each of its byte offsets and its end, the
// offset in v it comes from: a folded rune's one byte stands for its three.
func foldWithOffsets(v string) (string, []int) {
	out := make([]byte, 0, len(v))
	at := make([]int, 0, len(v)+1)
next:
	for i := 0; i < len(v); {
		for _, f := range foldingRunes {
			if strings.HasPrefix(v[i:], f.r) {
				out, at = append(out, f.letter), append(at, i)
				i += len(f.r)
				continue next
			}
		}
		out, at = append(out, v[i]), append(at, i)
		i++
	}
	return string(out), append(at, len(v))
}
