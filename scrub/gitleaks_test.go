package scrub

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

func TestScrubbersWithTheSameRulesShareOneRuleSet(t *testing.T) {
	// The processor and the replay extension: same policy, their own keys.
	processor := newScrubber(t, Config{Enabled: true, Key: "a"})
	extension := newScrubber(t, Config{Enabled: true, Key: "b", Detectors: map[string]string{"email": ActionOff}})
	assert.Same(t, processor.gitleaks, extension.gitleaks, "no gitleaks rule is off in either")
	assert.Equal(t, ActionMask, extension.actions["github_pat"], "a shared rule set still records each kind's action")

	quarantine := newScrubber(t, Config{Enabled: true, Key: "c", Detectors: map[string]string{"github_pat": ActionQuarantine}})
	assert.Same(t, processor.gitleaks, quarantine.gitleaks, "the action is the Scrubber's, not the rule set's")
	assert.Equal(t, ActionQuarantine, quarantine.actions["github_pat"])

	off := newScrubber(t, Config{Enabled: true, Key: "a", Detectors: map[string]string{"github_pat": ActionOff}})
	assert.NotSame(t, processor.gitleaks, off.gitleaks)
	assert.NotContains(t, off.gitleaks.ids, "github-pat")
	assert.Contains(t, processor.gitleaks.ids, "github-pat")
	assert.NotContains(t, off.actions, "github_pat")
	ghp := "ci ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU"
	assert.Equal(t, ghp, off.Text(ghp, &Report{}))
	assert.NotEqual(t, ghp, processor.Text(ghp, &Report{}))
}

func TestARuleSetNoScrubberUsesIsBuiltAgain(t *testing.T) {
	cfg := Config{Enabled: true, Key: "a", Detectors: map[string]string{"gitlab_pat": ActionOff, "npm_access_token": ActionOff}}
	built := func() weak.Pointer[gitleaksRules] { return weak.Make(newScrubber(t, cfg).gitleaks) }()
	runtime.GC()
	assert.Nil(t, built.Value(), "the cache does not keep a rule set alive")
	gitleaksRuleSets.Lock()
	assert.Nil(t, gitleaksRuleSets.byOff["gitlab-pat,npm-access-token"].Value())
	gitleaksRuleSets.Unlock()
	again := newScrubber(t, cfg)
	require.NotNil(t, again.gitleaks)
	assert.NotContains(t, again.gitleaks.ids, "gitlab-pat")
	assert.Equal(t, "glpat-Ab3De6Gh9Jk2Mn5Pq8St", again.Text("glpat-Ab3De6Gh9Jk2Mn5Pq8St", &Report{}))
}

// TestScrubbersSharingARuleSetScanConcurrently runs under -race: gitleaks' DetectString is
// called from both scrubbers at once on the one detector.
func TestScrubbersSharingARuleSetScanConcurrently(t *testing.T) {
	first := newScrubber(t, Config{Enabled: true, Key: "a"})
	second := newScrubber(t, Config{Enabled: true, Key: "b"})
	require.Same(t, first.gitleaks, second.gitleaks)
	var wg sync.WaitGroup
	for i, s := range []*Scrubber{first, second, first, second} {
		wg.Go(func() {
			for _, p := range scrubtest.Planted {
				text := "value " + p.Text + " seen by scrubber " + string(rune('0'+i))
				assert.NotContains(t, s.Text(text, &Report{}), p.Must(), p.Kind)
			}
		})
	}
	wg.Wait()
}

// A secret repeated n times gives n spans, not one set of n per report gitleaks makes of it
// (n², 16 million spans for a tool result that repeats a key 4,096 times).
func TestRepeatedSecretGivesOneSpanPerOccurrence(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	const n = 200
	v := strings.Repeat(`client_key = "8dyfuiRyq=vVc3RRr_edRk-fK__JItpZ"`+"\n", n)
	assert.Equal(t, n, len(s.gitleaksSpans(v)), "spans")
	assert.NotContains(t, s.Text(v, &Report{}), "8dyfuiRyq")
}
