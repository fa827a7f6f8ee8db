package scrub

import "strings"

// A word of letters only, where a secret may stand, is either the secret or says something
// about one: "the password is swordfish" or "the password is required", "sessionid=abcdefghij"
// or "session=disabled". The prose rule (strongprose.go) and the session cookie rule
// (cookies.go) take such a word unless it describes: it is written as a word (lower case, a
// capital then lower case, or upper case: a random value mixes cases) and it is one of
// describingWords or ends like a participle or an adverb (-ed, -ing, -ly: "is stored", "is
// missing", "is randomly generated"). A password that reads so ("dragonfly", "lightning") is
// not found: the words after "is" are far more often descriptions, and a false positive
// replaces a word of every such sentence.

// describingWords are the words of six letters or more (shorter ones are under both rules'
// floors: "is wrong", "is not", "is empty", "is set") that say what a secret is or is not.
var describingWords = func() map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(`
		incorrect correct invalid optional mandatory necessary needless useless
		visible hidden secret private public strong secure insecure unsafe broken stolen
		forgotten written given chosen taken shown unknown unique random simple complex
		longer shorter different similar identical common obvious trivial special static
		temporary permanent default active inactive anonymous persistent guessable
		predictable sensitive insensitive invisible available unavailable
		always already either neither another something nothing anything everything
		whatever because should cannot better easier harder weaker stronger inside within
		without before after almost rather around between through during unless`) {
		set[w] = true
	}
	return set
}()

// describes tells whether w, letters only, is written as a word and describes (above).
func describes(w string) bool {
	if !wordShaped(w) {
		return false
	}
	lower := strings.ToLower(w)
	return describingWords[lower] || strings.HasSuffix(lower, "ed") || strings.HasSuffix(lower, "ing") ||
		strings.HasSuffix(lower, "ly")
}

// wordShaped: w is ASCII letters written as a word is: all lower case, a capital then lower
// case, or all upper case.
func wordShaped(w string) bool {
	if w == "" {
		return false
	}
	upper := 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= 'A' && c <= 'Z':
			upper++
		case c < 'a' || c > 'z':
			return false
		}
	}
	first := w[0] >= 'A' && w[0] <= 'Z'
	return upper == 0 || upper == 1 && first || upper == len(w)
}
