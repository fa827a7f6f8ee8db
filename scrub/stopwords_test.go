package scrub

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// TestStopWordsDropWhatGitleaksDrops compares the scrubber's rule set (stop words taken out of
// gitleaks' allow-lists and applied by the scrubber) with gitleaks' own detector on the default
// configuration: the same findings, for a generic API key around every stop word, in upper case
// too, outside the secret, and for every planted value.
func TestStopWordsDropWhatGitleaksDrops(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	stock, err := stockGitleaks()
	require.NoError(t, err)
	findings := func(fs []report.Finding) []string { return sortedFindings(s.gitleaks, fs) }

	def, err := gitleaksDefault()
	require.NoError(t, err)
	require.Contains(t, def.stopWords, "generic-api-key")
	for _, a := range def.Rules["generic-api-key"].Allowlists {
		assert.Empty(t, a.StopWords, "taken out of gitleaks' allow-list")
	}
	stockRule := stock.Config.Rules["generic-api-key"]
	var words []string
	for _, a := range stockRule.Allowlists {
		words = append(words, a.StopWords...)
	}
	require.Greater(t, len(words), 1000)

	var texts []string
	for _, w := range words {
		texts = append(texts, fmt.Sprintf(`api_key = "Xq3vT8pL2m%sN9rB4wK7y"`, w), fmt.Sprintf(`client_secret: 'Zp8Lm2Qw9Rt4%sYx7Vb1Nc3'`, mixedCase(w)),
			w+` {"token": "Xq3vT8pL2mQZN9rB4wK7y"}`) // a stop word outside the secret does not count
	}
	for _, p := range scrubtest.Planted {
		texts = append(texts, "config "+p.Text+" end")
	}
	control := `api_key = "Xq3vT8pL2mQZN9rB4wK7y"`
	texts = append(texts, control)
	require.NotEmpty(t, findings(stock.DetectString(control)), "a generic key without a stop word is found")

	dropped := 0
	for _, text := range texts {
		want := findings(stock.DetectString(text))
		assert.Equal(t, want, findings(s.gitleaks.detect(text)), text)
		if len(want) == 0 {
			dropped++
		}
	}
	t.Logf("%d texts, %d without a finding", len(texts), dropped)
	assert.Greater(t, dropped, len(words), "stop words dropped the generic keys around them (the test is not vacuous)")
	assert.Less(t, dropped, len(texts)-len(words), "and not those beside them")
}
