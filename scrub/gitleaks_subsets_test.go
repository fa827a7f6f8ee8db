package scrub

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// stockGitleaks is gitleaks' own detector on its default configuration, as the scrubber used it
// before it chose the rules itself: every rule, its keyword trie, no decoding.
var stockGitleaks = sync.OnceValues(func() (*detect.Detector, error) {
	d, err := detect.NewDetectorDefaultConfig()
	if err == nil {
		d.MaxDecodeDepth = 0
	}
	return d, err
})

// sortedFindings is what a finding is to the scrubber (rule, secret, where), sorted: gitleaks
// visits rules in map order. Only the rules g runs count (the path-only rules find nothing in a
// text).
func sortedFindings(g *gitleaksRules, fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		if slices.Contains(g.ids, f.RuleID) {
			out = append(out, fmt.Sprintf("%s %q %d-%d", f.RuleID, f.Secret, f.StartColumn, f.EndColumn))
		}
	}
	slices.Sort(out)
	return out
}

// gitleaksTexts are texts with one planted value, two on one line (rules found together, and
// the generic rule's finding that gitleaks drops when another rule found the same secret), each
// after an assignment a generic rule matches, and each with k and K spelled with the Kelvin
// sign, which lower-cases to k (and which a case-insensitive expression matches as k), and with
// i and I spelled İ, which lower-cases to i.
func gitleaksTexts() []string {
	var texts []string
	for i, p := range scrubtest.Planted {
		next := scrubtest.Planted[(i+1)%len(scrubtest.Planted)]
		texts = append(texts, "config "+p.Text+" end", p.Text+" and "+next.Text,
			fmt.Sprintf(`api_key = "%s"`, p.Must()), fmt.Sprintf(`{"token": "%s", "password": "%s"}`, p.Must(), next.Must()),
			strings.NewReplacer("k", kelvin, "K", kelvin).Replace(p.Text), strings.NewReplacer("i", dotI, "I", dotI).Replace(p.Text))
	}
	return append(texts, "api_\u212aey = \"Xq3vT8pL2mQZN9rB4wK7y\"", `api_key = "ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU"`)
}

// TestRulesChosenByKeywordFindWhatGitleaksFinds: the scrubber runs only the rules whose keywords
// a text holds, through a detector of just those rules; its findings must be gitleaks' own.
func TestRulesChosenByKeywordFindWhatGitleaksFinds(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	stock, err := stockGitleaks()
	require.NoError(t, err)
	found := 0
	for _, text := range gitleaksTexts() {
		want := sortedFindings(s.gitleaks, stock.DetectString(text))
		assert.Equal(t, want, sortedFindings(s.gitleaks, s.gitleaks.detect(text)), text)
		found += len(want)
	}
	assert.Greater(t, found, len(scrubtest.Planted), "the texts hold findings (the test is not vacuous)")

	// Not vacuous either: gitleaks drops the generic finding of a secret another rule found in
	// the same text, which a detector per rule would not.
	ghp := `api_key = "ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU"`
	assert.Equal(t, []string{`github-pat "ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU" 12-51`}, sortedFindings(s.gitleaks, s.gitleaks.detect(ghp)))
	var generic ruleSet
	generic.add(slices.Index(s.gitleaks.ids, "generic-api-key"))
	assert.NotEmpty(t, s.gitleaks.detector(generic, false).DetectString(ghp), "the generic rule alone finds it")
	// And a keyword spelled with the Kelvin sign still chooses its rule, as in gitleaks.
	assert.NotEmpty(t, s.gitleaks.detect("api_\u212aey = \"Xq3vT8pL2mQZN9rB4wK7y\""))
}

// TestRulesCompileWhenATextNeedsThem: the configuration a process keeps holds no compiled
// expression, and a rule set compiles a rule's expression only once a text needs the rule (has
// one of its keywords), then finds what gitleaks finds with it.
func TestRulesCompileWhenATextNeedsThem(t *testing.T) {
	def, err := gitleaksDefault()
	require.NoError(t, err)
	require.Greater(t, len(def.regexes), 150)
	for id, rule := range def.Rules {
		assert.Nil(t, rule.Regex, "rule %s is kept compiled", id)
	}
	g, err := newGitleaks(def, nil)
	require.NoError(t, err)
	assert.Empty(t, compiledRules(g), "none before a text")
	assert.Empty(t, g.detect("sunshine over Paris today"))
	assert.Empty(t, compiledRules(g), "none for a text without keywords")

	stock, err := stockGitleaks()
	require.NoError(t, err)
	pat := `token ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU`
	require.NotEmpty(t, stock.DetectString(pat))
	assert.Equal(t, sortedFindings(g, stock.DetectString(pat)), sortedFindings(g, g.detect(pat)))
	after := compiledRules(g)
	assert.Contains(t, after, "github-pat")
	assert.Less(t, len(after), 10, "only the rules with the text's keywords: %v", after)
	assert.NotContains(t, after, "aws-access-token")

	aws := `aws_key AKIAIOSFODNN7EXAMPLF`
	assert.Equal(t, sortedFindings(g, stock.DetectString(aws)), sortedFindings(g, g.detect(aws)))
	assert.Contains(t, compiledRules(g), "aws-access-token")
	assert.Subset(t, compiledRules(g), after, "a compiled rule stays compiled")
}

// TestFixtureRunsCompileFewRules scrubs every attribute and log body of the four fixture
// recordings with a rule set that has compiled nothing, and logs the rules that were compiled:
// the recordings of real agents need few of the ~220, so most expressions are never compiled.
// Run: go test -count 1 -run TestFixtureRunsCompileFewRules -v ./scrub/
func TestFixtureRunsCompileFewRules(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"}) // the default policy: no rule is off
	def, err := gitleaksDefault()
	require.NoError(t, err)
	s.gitleaks, err = newGitleaks(def, nil) // not the process's shared rule set, which other tests have used
	require.NoError(t, err)
	values := 0
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.OTelNoContent, testfixtures.Traceloop, testfixtures.OpenInference} {
		for _, rs := range testfixtures.Traces(t, run).ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					s.Map(span.Attributes(), &Report{})
					for _, e := range span.Events().All() {
						s.Map(e.Attributes(), &Report{})
					}
					values += span.Attributes().Len()
				}
			}
		}
		for _, rl := range testfixtures.Logs(t, run).ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					s.Map(lr.Attributes(), &Report{})
					s.Value(lr.Body(), &Report{})
					values += lr.Attributes().Len() + 1
				}
			}
		}
	}
	compiled := compiledRules(s.gitleaks)
	t.Logf("%d attributes and log bodies scrubbed; %d of %d rules compiled: %v", values, len(compiled), len(s.gitleaks.ids), compiled)
	assert.NotEmpty(t, compiled, "the recordings hold keywords (key, token …): the test reaches gitleaks")
	assert.Less(t, len(compiled), 10)
}

// compiledRules lists the ids of the rules g has compiled.
func compiledRules(g *gitleaksRules) (ids []string) {
	for n, re := range g.compiled {
		if re != nil {
			ids = append(ids, g.ids[n])
		}
	}
	return ids
}

// TestRulesCompileConcurrently runs under -race: texts that need the same rules for the first
// time are scanned at once, from a rule set that has compiled none, and each finds what gitleaks
// finds.
func TestRulesCompileConcurrently(t *testing.T) {
	def, err := gitleaksDefault()
	require.NoError(t, err)
	g, err := newGitleaks(def, nil)
	require.NoError(t, err)
	stock, err := stockGitleaks()
	require.NoError(t, err)
	var texts, want []string
	for _, p := range scrubtest.Planted {
		text := "config " + p.Text + " end"
		texts, want = append(texts, text), append(want, strings.Join(sortedFindings(g, stock.DetectString(text)), "|"))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i, text := range texts {
				assert.Equal(t, want[i], strings.Join(sortedFindings(g, g.detect(text)), "|"), text)
			}
		})
	}
	wg.Wait()
}

// TestDetectorsKeptAreBounded: a detector is kept per set of rules texts have needed, up to
// maxDetectors; past that each is made for its text, and finds the same.
func TestDetectorsKeptAreBounded(t *testing.T) {
	def, err := gitleaksDefault()
	require.NoError(t, err)
	g, err := newGitleaks(def, nil)
	require.NoError(t, err)
	var keywords []string
	for _, id := range g.ids {
		keywords = append(keywords, def.Rules[id].Keywords[0])
	}
	keywords = slices.Compact(slices.Sorted(slices.Values(keywords)))
	require.Greater(t, len(keywords), maxDetectors+10)
	for _, k := range keywords {
		g.detect(k + " ~ ")
	}
	assert.Len(t, g.detectors, maxDetectors)
	stock, err := stockGitleaks()
	require.NoError(t, err)
	for _, text := range gitleaksTexts() {
		text = strings.Join(keywords[len(keywords)-5:], " ") + " " + text // a set not kept
		assert.Equal(t, sortedFindings(g, stock.DetectString(text)), sortedFindings(g, g.detect(text)), text)
	}
	assert.Len(t, g.detectors, maxDetectors)
}

// FuzzRulesChosenByKeyword: on any text, the scrubber's gitleaks findings are gitleaks' own.
func FuzzRulesChosenByKeyword(f *testing.F) {
	for _, text := range gitleaksTexts() {
		f.Add(text)
	}
	s := newScrubber(f, Config{Enabled: true, Key: "k"})
	stock, err := stockGitleaks()
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, text string) {
		want := sortedFindings(s.gitleaks, stock.DetectString(text))
		if got := sortedFindings(s.gitleaks, s.gitleaks.detect(text)); !slices.Equal(got, want) {
			t.Fatalf("%q: got %v, gitleaks finds %v", text, got, want)
		}
	})
}

// TestOnlyTwoRunesLowerCaseToASCII: asciiFolded stands for strings.ToLower, as gitleaks applies
// it before looking for keywords, only if no other rune outside ASCII lower-cases to ASCII and
// every keyword is ASCII.
func TestOnlyTwoRunesLowerCaseToASCII(t *testing.T) {
	var toASCII []string
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		lower := strings.ToLower(string(r))
		if strings.IndexFunc(lower, func(c rune) bool { return c < utf8.RuneSelf }) >= 0 {
			toASCII = append(toASCII, string(r)+"→"+lower)
			assert.Equal(t, lower, asciiFolded(string(r)), "%U", r)
		}
	}
	assert.Equal(t, []string{dotI + "→i", kelvin + "→k"}, toASCII)
	def, err := gitleaksDefault()
	require.NoError(t, err)
	for id, rule := range def.Rules {
		for _, k := range rule.Keywords {
			assert.Equal(t, -1, strings.IndexFunc(k, func(c rune) bool { return c >= utf8.RuneSelf }), "rule %s keyword %q", id, k)
		}
	}
	plain := "a text without either"
	assert.Same(t, unsafe.StringData(plain), unsafe.StringData(asciiFolded(plain)), "not copied")
}
