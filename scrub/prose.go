package scrub

import (
	"strings"
	"unicode/utf8"
)

// Gitleaks' rules are written for code: most end a secret at a quote, whitespace, ';', a
// backslash escape or the end of the text (`(?:[\x60'"\s;]|\\[nr]|$)`). In prose a secret is
// followed by a comma, a full stop, a closing bracket or a typographic quote ("my key is
// AIzaSy…Q2Z.", "(eyJ….eyJ….c2ln)", “sk_live_…”), and gcp_api_key, stripe_access_token,
// npm_access_token, huggingface_access_token, jwt … find nothing there. gitleaks therefore also
// runs on a view of the text in which such punctuation after a long token, when it ends the
// token (whitespace, a quote, more such punctuation or the end follow), and typographic quotes
// are spaces. The view has the text's length and offsets.

// closing is the punctuation that can end a token in prose.
const closing = ",.:!?)]}>*|"

// typographicQuotes are never part of a secret.
var typographicQuotes = []string{"“", "”", "‘", "’", "«", "»", "‹", "›"}

// minProseToken is the length of a token before which punctuation is worth blanking: the
// secrets of gitleaks' rules are longer, and hold a digit or a capital after their first
// character (ordinary words, "conditions.", do not call for a second scan).
const minProseToken = 10

// proseView returns v with the punctuation that ends long tokens and typographic quotes
// replaced by spaces, and whether a token like a secret ended so (else a second scan finds
// nothing new).
func proseView(v string) (string, bool) {
	var b []byte // made on the first change
	worth := false
	run, mixed := 0, false // the token before i: its length, whether it holds a digit or an inner capital
	secretLike := func() bool { return run >= minProseToken && mixed }
	for i := 0; i < len(v); {
		n := 1
		switch c := v[i]; {
		case c >= utf8.RuneSelf:
			_, n = utf8.DecodeRuneInString(v[i:])
			if typographicQuote(v[i:]) {
				b = blank(b, v, i, n)
				worth = worth || secretLike()
			}
			run, mixed = 0, false
		case secretLike() && strings.IndexByte(closing, c) >= 0:
			for i+n < len(v) && strings.IndexByte(closing, v[i+n]) >= 0 {
				n++ // and any more of it
			}
			if endsToken(v, i+n) {
				b = blank(b, v, i, n)
				worth, run, mixed = true, 0, false
			} else {
				run += n
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '`':
			run, mixed = 0, false
		default:
			mixed = mixed || c >= '0' && c <= '9' || run > 0 && c >= 'A' && c <= 'Z'
			run++
		}
		i += n
	}
	if !worth {
		return v, false
	}
	return string(b), true
}

func typographicQuote(v string) bool {
	for _, q := range typographicQuotes {
		if strings.HasPrefix(v, q) {
			return true
		}
	}
	return false
}

// endsToken tells whether what is at v[i] ends a token: the end, whitespace, a quote or a
// typographic quote.
func endsToken(v string, i int) bool {
	if i >= len(v) {
		return true
	}
	switch v[i] {
	case ' ', '\t', '\n', '\r', '"', '\'', '`':
		return true
	}
	return typographicQuote(v[i:])
}

// blank writes n spaces over v[i:i+n] in b, a copy of v made on the first call.
func blank(b []byte, v string, i, n int) []byte {
	if b == nil {
		b = []byte(v)
	}
	for k := i; k < i+n; k++ {
		b[k] = ' '
	}
	return b
}
