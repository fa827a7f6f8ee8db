package scrub

import "strings"

// A passphrase is a secret whatever its shape: `password: correct horse battery staple` on a
// line of its own (YAML, a .env file, a form pasted into a prompt) is a value with spaces, and
// the unquoted value of a `name: value` pair ends at the first space, so "horse battery
// staple" was kept. Under a strong name (below), a pair takes the rest of its line (or of a
// `;`-separated field of a connection string) as its value, up to where another pair starts:
// after a comma (`secret: x y, user: bob` keeps `, user: bob`) or a `name=value` after a space
// (`password=pw dbname=x`, logfmt). Names that are also used for
// what is no secret keep the first word: `token` (token counts, "token: the next word"), `key`
// (map keys), `api_key`, `credential`, `dsn` (keyword DSNs name their password separately).
// A pair inside a line of prose is widened too ("my password: correct horse battery staple"):
// the first word was masked already, and the rest of a line that ends no sentence is more
// likely the passphrase than prose; a sentence ("forgot your password: click the link below to
// reset it.") keeps all but its first word, unless it is as short as a passphrase
// (maxSentenceWords: "my password: correct horse battery staple." masks the four words).

// strongNames are the endings of key names whose value is secret whatever it looks like, as
// words: strongEndings compares key names normalized (lower case, no separators), and the
// prose pattern (keynames.go, `the password is …`) finds them with any separator between words.
var strongNames = []string{"password", "passwd", "passphrase", "secret", "private key", "secret key"}

var strongEndings = func() []string {
	out := make([]string, len(strongNames))
	for i, n := range strongNames {
		out[i] = normalizeKeyName(n)
	}
	return out
}()

// maxLineValue bounds a widened value: a longer rest of line is prose, not a passphrase, and
// the scan for the line's end stops there.
const maxLineValue = 256

// strongName tells whether key, as written in text, ends with a strong name (db_password,
// client_secret, SSH_PASSPHRASE, private_key; not password_policy).
func strongName(key string) bool {
	return nameEndsIn(key, strongEndings)
}

// nameEndsIn tells whether key, normalized, ends in one of endings (normalized).
func nameEndsIn(key string, endings []string) bool {
	n := normalizeKeyName(key)
	for _, e := range endings {
		if strings.HasSuffix(n, e) {
			return true
		}
	}
	return false
}

// opensField tells whether the key at v[keyStart] opens its line (after indentation, a YAML
// list's "- " or a shell's "export ") or a `;`-separated field.
func opensField(v string, keyStart int) bool {
	i := keyStart
	if i >= 7 && v[i-7:i] == "export " {
		i -= 7
	}
	for i > 0 && (v[i-1] == ' ' || v[i-1] == '\t' || v[i-1] == '-') {
		i--
	}
	return i == 0 || v[i-1] == '\n' || v[i-1] == '\r' || v[i-1] == ';'
}

// lineValueEnd returns where the unquoted value v[start:end] under a strong name ends when it
// goes on past its first word: the end of the line or field, or the comma before the next pair,
// without trailing spaces and commas. It returns end when the rest holds what a passphrase on
// its own does not: quotes, brackets, a backslash (an escape: the decoded text is scanned too),
// a placeholder, more than maxLineValue bytes, or a sentence's or a label's last character.
func lineValueEnd(v string, start, end int) int {
	i := end
	for ; i < len(v) && v[i] != '\n' && v[i] != '\r' && v[i] != ';'; i++ {
		if v[i] == ',' && startsPair(v, i+1, ":=") || (v[i] == ' ' || v[i] == '\t') && startsPair(v, i+1, "=") {
			break
		}
		if i-start > maxLineValue || strings.IndexByte("\"'`<>()[]{}\\", v[i]) >= 0 {
			return end
		}
	}
	for i > end && (v[i-1] == ' ' || v[i-1] == '\t' || v[i-1] == ',') {
		i--
	}
	if i > end && v[i-1] == '.' && v[i-2] != '.' && words(v[start:i-1]) <= maxSentenceWords {
		i-- // the full stop of "my password: correct horse battery staple."
	}
	if i > end && strings.IndexByte(".!?:", v[i-1]) >= 0 {
		return end // a sentence ("Password: click the link below to reset it.") or a label
	}
	return i
}

// maxSentenceWords is the most words a value that ends in a full stop may have: a passphrase
// has up to six or so ("correct horse battery staple."), and a longer sentence after the name
// is prose ("Forgot your password: click the link below to reset it."), of which only the first
// word is masked. A short sentence is taken whole ("the password: see the vault." masks "see
// the vault"): its first word was masked already, and a passphrase is worth the few words.
const maxSentenceWords = 6

// words counts the words of v, separated by spaces or tabs.
func words(v string) int {
	return len(strings.Fields(v))
}

// startsPair tells whether v[i:] starts another pair: after spaces, a name of key bytes that
// starts with a letter, then (after spaces, when seps holds ':') one of seps. After a comma a
// pair is `name: value` or `name=value`; after a space only `name=value` (logfmt, a keyword DSN:
// `password=pw dbname=x`), since a passphrase's words can end in ':' ("Note: …").
func startsPair(v string, i int, seps string) bool {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	if i == len(v) || !(v[i] >= 'a' && v[i] <= 'z' || v[i] >= 'A' && v[i] <= 'Z') {
		return false
	}
	for i < len(v) && isKeyByte(v[i]) {
		i++
	}
	for i < len(v) && v[i] == ' ' && strings.IndexByte(seps, ':') >= 0 {
		i++
	}
	return i < len(v) && strings.IndexByte(seps, v[i]) >= 0
}
