package scrub

import "unicode/utf8"

// Look-alike characters. A phone or card number written with no-break or thin spaces
// ("06\u00a012\u00a034\u00a056\u00a078", as word processors and French typography write it),
// non-breaking hyphens or en dashes, or in fullwidth digits (０９０－１２３４－５６７８, as
// Japanese and Chinese text writes it), and an e-mail address with a zero-width space or a soft
// hyphen in it, read as the same to a person, but the rules' \d, [ .-] and @ do not see them.
// The text is therefore also scanned with these characters replaced by the ASCII they stand for
// (invisible ones dropped); findings are mapped back to the bytes they stand for (plainView).

// dropRune marks a character that is dropped from the view.
const dropRune = -1

// plainRune returns the ASCII character r stands for, dropRune for an invisible one, and
// whether r is a look-alike at all.
func plainRune(r rune) (rune, bool) {
	switch {
	case r == '\u00a0', r >= '\u2000' && r <= '\u200a', r == '\u202f', r == '\u205f', r == '\u3000':
		return ' ', true
	case r >= '\u2010' && r <= '\u2013', r == '\u2212', r == '\ufe63':
		return '-', true
	case r >= '\uff01' && r <= '\uff5e': // fullwidth forms of ASCII ! to ~
		return r - 0xfee0, true
	case r >= '\u200b' && r <= '\u200d', r == '\u2060', r == '\ufeff', r == '\u00ad':
		return dropRune, true
	}
	return r, false
}

// hasLookalike tells whether v holds a look-alike character; ASCII text is passed over byte by
// byte.
func hasLookalike(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < utf8.RuneSelf {
			continue
		}
		r, n := utf8.DecodeRuneInString(v[i:])
		if _, ok := plainRune(r); ok {
			return true
		}
		i += n - 1
	}
	return false
}
