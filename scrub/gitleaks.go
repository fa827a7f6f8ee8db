package scrub

import (
	"maps"
	"sort"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// The credential rule set is gitleaks' default configuration (about 220 maintained rules,
// each a regular expression with keywords, an entropy threshold and allow-lists), used as a
// library. Its rule ids become kinds in snake_case: aws-access-token → aws_access_token.

var gitleaksDefault = sync.OnceValues(func() (config.Config, error) {
	// gitleaks logs through a global zerolog logger to stderr; its messages can quote what
	// it looked at, and nothing it says belongs in the collector's log.
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return config.Config{}, err
	}
	return d.Config, nil
})

// gitleaksKind is the kind of a gitleaks rule.
func gitleaksKind(ruleID string) string {
	return strings.ReplaceAll(ruleID, "-", "_")
}

// gitleaksKinds lists the kinds of the default rule set, sorted.
func gitleaksKinds() []string {
	cfg, err := gitleaksDefault()
	if err != nil {
		return nil
	}
	var kinds []string
	for id := range cfg.Rules {
		kinds = append(kinds, gitleaksKind(id))
	}
	sort.Strings(kinds)
	return kinds
}

// gitleaksRules is the gitleaks detector with the keywords of its rules: every rule has
// keywords, and gitleaks only runs a rule on text that contains one. DetectString has a fixed
// cost per call (it lower-cases the text and visits every rule), far above that of one short
// attribute value, so the same keyword test runs first, once, and most values (model names,
// operation names, ordinary prose) never reach gitleaks.
type gitleaksRules struct {
	detector *detect.Detector
	keywords *ahocorasick.Trie
}

// newGitleaks builds a gitleaks detector without the rules whose kind is off. Decoding is
// left to the walker (which decodes base64 itself and masks the encoded text), so gitleaks
// scans text as given.
func newGitleaks(off func(kind string) bool) (*gitleaksRules, error) {
	cfg, err := gitleaksDefault()
	if err != nil {
		return nil, err
	}
	rules := maps.Clone(cfg.Rules)
	var keywords []string
	for id, rule := range rules {
		if off(gitleaksKind(id)) || rule.Regex == nil {
			delete(rules, id) // off, or a rule on file paths only
			continue
		}
		for _, k := range rule.Keywords {
			keywords = append(keywords, strings.ToLower(k))
		}
	}
	cfg.Rules = rules
	d := detect.NewDetector(cfg)
	d.MaxDecodeDepth = 0
	return &gitleaksRules{detector: d, keywords: ahocorasick.NewTrieBuilder().AddStrings(keywords).Build()}, nil
}

// detect returns gitleaks' findings in v.
func (g *gitleaksRules) detect(v string) []report.Finding {
	if g.keywords.MatchFirstString(asciiLower(v)) == nil {
		return nil
	}
	return g.detector.DetectString(v)
}
