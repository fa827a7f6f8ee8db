package scrub

import (
	"slices"
	"strings"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// containsKeyword is the definition the index must agree with: some keyword occurs in the text,
// ASCII letters lower-cased on both sides.
func containsKeyword(keywords []string, text string) bool {
	lower := asciiLower(text)
	for _, k := range keywords {
		if strings.Contains(lower, asciiLower(k)) {
			return true
		}
	}
	return false
}

// keywordsIn is the definition each must agree with: the numbers of the keywords that occur in
// the text, ASCII letters lower-cased (a keyword given twice, in any case, under its first
// number).
func keywordsIn(keywords []string, text string) []int {
	lower := asciiLower(text)
	var in []int
	for n, k := range keywords {
		first := slices.IndexFunc(keywords, func(w string) bool { return asciiLower(w) == asciiLower(k) })
		if strings.Contains(lower, asciiLower(k)) && first == n {
			in = append(in, n)
		}
	}
	return in
}

// eachOnce is the keywords each reports for text, each number once, sorted.
func eachOnce(k *keywordIndex, text string) []int {
	var got []int
	k.each(text, func(n int) { got = append(got, n) })
	slices.Sort(got)
	return slices.Compact(got)
}

// defaultKeywords are the keywords of the rules the default policy hands to gitleaks: the value
// reaches gitleaks iff one of them occurs.
func defaultKeywords(t testing.TB) ([]string, *keywordIndex) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	def, err := gitleaksDefault()
	require.NoError(t, err)
	var keywords []string
	for _, id := range s.gitleaks.ids {
		rule := def.Rules[id]
		for _, k := range rule.Keywords {
			keywords = append(keywords, strings.ToLower(k))
		}
	}
	require.Greater(t, len(keywords), 100, "the default rule set has a few hundred keywords")
	return keywords, s.gitleaks.keywords
}

func TestKeywordIndexFindsEveryDefaultKeyword(t *testing.T) {
	keywords, index := defaultKeywords(t)
	const filler = "~ 0 ~ 0 ~" // holds no keyword
	require.False(t, containsKeyword(keywords, filler))
	require.False(t, index.in(filler))
	for _, k := range keywords {
		for _, word := range []string{k, strings.ToUpper(k), mixedCase(k)} {
			for _, text := range []string{word, word + filler, filler + word + filler, filler + word} {
				assert.True(t, index.in(text), "%q in %q", k, text)
			}
		}
		// One byte short of the keyword: found only if another keyword occurs in it.
		short := filler + k[:len(k)-1] + filler
		assert.Equal(t, containsKeyword(keywords, short), index.in(short), short)
	}
}

// mixedCase upper-cases every other ASCII letter.
func mixedCase(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i += 2 {
		if b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

func TestKeywordIndexOverlappingKeywords(t *testing.T) {
	for _, tc := range []struct {
		keywords []string
		text     string
		want     bool
	}{
		{[]string{"abcd", "bc"}, "xabcx", true}, // a keyword inside a longer one's prefix
		{[]string{"abcx", "bcd"}, "abcd", true}, // the longer prefix fails over to the other keyword
		{[]string{"aab"}, "aaab", true},         // fails over to a prefix of itself
		{[]string{"sk", "ask"}, "as", false},    //
		{[]string{"sk", "ask"}, "task", true},   //
		{[]string{"he", "she", "his", "hers"}, "ushers", true},
		{[]string{"she", "his", "hers"}, "hi her sh", false},
		{[]string{"Key"}, "KEY", true},                             // ASCII letters without case, keywords too
		{[]string{"key"}, "kex", false},                            //
		{[]string{"é"}, "É", false},                                // only ASCII letters are folded, as asciiLower does
		{[]string{"ab"}, "a\xffb", false},                          // a byte in no keyword restarts the match
		{[]string{"a-b"}, "A-B", true},                             //
		{nil, "anything", false},                                   // no keywords: nothing reaches gitleaks
		{[]string{""}, "", true},                                   // the empty keyword occurs everywhere
		{[]string{"x"}, "", false},                                 //
		{[]string{"hers", "he", "s", "ers", "he"}, "ushers", true}, // every suffix that is a keyword, a keyword given twice
		{[]string{"a", "aa", "aaa"}, "aaaa", true},                 // keywords that end inside each other
		{[]string{"Key", "key", "KEY"}, "a key", true},             // the same keyword in other cases: the first number
	} {
		k, err := newKeywordIndex(tc.keywords)
		require.NoError(t, err)
		assert.Equal(t, tc.want, k.in(tc.text), "%q in %q", tc.keywords, tc.text)
		assert.Equal(t, containsKeyword(tc.keywords, tc.text), tc.want, "the case agrees with the definition")
		assert.Equal(t, keywordsIn(tc.keywords, tc.text), eachOnce(k, tc.text), "which of %q are in %q", tc.keywords, tc.text)
	}
}

func TestKeywordIndexRefusesMoreRowsThanItCanNumber(t *testing.T) {
	// Every three-letter word over 41 letters: 41 + 41² + 41³ = 70,643 prefixes.
	var words []string
	letters := "abcdefghijklmnopqrstuvwxyz0123456789_-.:/"
	for _, a := range letters {
		for _, b := range letters {
			for _, c := range letters {
				words = append(words, string([]rune{a, b, c}))
			}
		}
	}
	_, err := newKeywordIndex(words)
	assert.ErrorContains(t, err, "more than 65536 distinct prefixes")
}

func TestKeywordIndexIsSmall(t *testing.T) {
	_, index := defaultKeywords(t)
	// A trie with a [256]int64 row per prefix needs 2 KiB per row; the default keywords have
	// 1,281 prefixes (2.6 MB in such a trie).
	assert.Less(t, index.size(), 256<<10, "bytes")
	t.Logf("default keyword index: %d rows × %d columns = %d bytes (%d in such a trie)",
		len(index.found), index.width, index.size(), len(index.found)*2<<10)

	// The stop words taken out of gitleaks' allow-lists (stopwords.go), which gitleaks keeps in
	// such a trie.
	def, err := gitleaksDefault()
	require.NoError(t, err)
	stopBytes, stopRows := 0, 0
	for _, words := range def.stopWords {
		stopBytes, stopRows = stopBytes+words.size(), stopRows+len(words.found)
	}
	assert.Less(t, stopBytes, 512<<10, "bytes")
	t.Logf("stop word indexes: %d rows = %d bytes (%d in such a trie)", stopRows, stopBytes, stopRows*2<<10)
}

// FuzzKeywordIndex: the index agrees with the definition, for the default keywords and for
// keywords the fuzzer makes up (one per line).
// Run: go test -run '^$' -fuzz FuzzKeywordIndex -fuzztime 30s ./scrub/
func FuzzKeywordIndex(f *testing.F) {
	f.Add("abcx\nbcd", "xxABCD")
	f.Add("he\nshe\nhis\nhers", "ushers")
	f.Add("sk-\nghp_\nxoxb", "token ghP_x and Sk- ")
	f.Add("aab\n", "aaab")
	keywords, _ := defaultKeywords(f)
	distinct := slices.Compact(slices.Sorted(slices.Values(keywords)))
	index, err := newKeywordIndex(distinct)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, words, text string) {
		if got, want := index.in(text), containsKeyword(keywords, text); got != want {
			t.Fatalf("default keywords in %q: got %v, want %v", text, got, want)
		}
		if got, want := eachOnce(index, text), keywordsIn(distinct, text); !slices.Equal(got, want) {
			t.Fatalf("which default keywords are in %q: got %v, want %v", text, got, want)
		}
		made := strings.Split(words, "\n")
		k, err := newKeywordIndex(made)
		if err != nil {
			t.Skip(err) // more prefixes than rows
		}
		if got, want := k.in(text), containsKeyword(made, text); got != want {
			t.Fatalf("%q in %q: got %v, want %v", made, text, got, want)
		}
		if got, want := eachOnce(k, text), keywordsIn(made, text); !slices.Equal(got, want) {
			t.Fatalf("which of %q are in %q: got %v, want %v", made, text, got, want)
		}
	})
}

// BenchmarkKeywordPrefilter compares the keyword test before and after the index replaced a
// general-purpose trie (github.com/BobuSumisu/aho-corasick, which gitleaks uses itself, with a
// lower-cased copy of the text): a short value with no keyword, and the texts of BenchmarkText
// (each holds a keyword, so the test stops at the first).
// Run: go test -run '^$' -bench KeywordPrefilter -benchmem -count 6 ./scrub/
func BenchmarkKeywordPrefilter(b *testing.B) {
	keywords, index := defaultKeywords(b)
	trie := ahocorasick.NewTrieBuilder().AddStrings(keywords).Build()
	texts := append([]struct{ name, text string }{{"model_name", "gpt-4o-mini-2024-07-18"}}, benchTexts()...)
	for _, tc := range texts {
		require.Equal(b, trie.MatchFirstString(asciiLower(tc.text)) != nil, index.in(tc.text), tc.name)
		b.Run(tc.name+"/trie", func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				_ = trie.MatchFirstString(asciiLower(tc.text))
			}
		})
		b.Run(tc.name+"/index", func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				_ = index.in(tc.text)
			}
		})
	}
}
