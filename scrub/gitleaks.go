package scrub

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"weak"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// The credential rule set is gitleaks' default configuration (about 220 maintained rules,
// each a regular expression with keywords, an entropy threshold and allow-lists), used as a
// library. Its rule ids become kinds in snake_case: aws-access-token → aws_access_token.

// gitleaksConfig is the default configuration with the stop words taken out (stopwords.go).
type gitleaksConfig struct {
	config.Config
	stopWords stopWords
}

var gitleaksDefault = sync.OnceValues(func() (gitleaksConfig, error) {
	// gitleaks logs through a global zerolog logger to stderr; its messages can quote what
	// it looked at, and nothing it says belongs in the collector's log.
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return gitleaksConfig{}, err
	}
	cfg, stop, err := withoutStopWords(d.Config)
	return gitleaksConfig{Config: cfg, stopWords: stop}, err
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
//
// It is safe for concurrent use: DetectString only reads the detector's rules and keyword trie
// (its one shared counter, TotalBytes, is atomic) and keeps each scan's state in locals.
type gitleaksRules struct {
	detector  *detect.Detector
	keywords  *keywordIndex
	stopWords stopWords // shared by every rule set, read only
}

// gitleaksRuleSets holds the rule set built for each set of rules turned off. The processor
// and the replay extension scrub with the same policy, and a built rule set holds ~2.6 MB
// (mostly the keyword trie gitleaks' detector builds for itself; `go test -count 1 -run
// 'TestScrubberHeap|TestKeywordIndexIsSmall' -v ./scrub/` logs what a Scrubber keeps and the
// trie's size), so each process builds one per distinct set. The map holds its values weakly:
// a rule set no Scrubber uses any more (after a configuration reload) is collected, and built
// again if a policy asks for it.
var gitleaksRuleSets = struct {
	sync.Mutex
	byOff map[string]weak.Pointer[gitleaksRules]
}{byOff: map[string]weak.Pointer[gitleaksRules]{}}

// sharedGitleaks returns the rule set without the rules whose kind is off, built once. It
// asks off about every rule's kind exactly once (New records the action of each kind that is on
// as it answers).
func sharedGitleaks(off func(kind string) bool) (*gitleaksRules, error) {
	cfg, err := gitleaksDefault()
	if err != nil {
		return nil, err
	}
	offIDs := map[string]bool{}
	for id := range cfg.Rules {
		if off(gitleaksKind(id)) {
			offIDs[id] = true
		}
	}
	key := strings.Join(slices.Sorted(maps.Keys(offIDs)), ",")

	gitleaksRuleSets.Lock()
	defer gitleaksRuleSets.Unlock()
	if g := gitleaksRuleSets.byOff[key].Value(); g != nil {
		return g, nil
	}
	g, err := newGitleaks(cfg, offIDs)
	if err != nil {
		return nil, err
	}
	gitleaksRuleSets.byOff[key] = weak.Make(g)
	return g, nil
}

// newGitleaks builds a gitleaks detector without the rules whose id is in off. Decoding is
// left to the walker (which decodes base64 itself and masks the encoded text), so gitleaks
// scans text as given.
func newGitleaks(def gitleaksConfig, off map[string]bool) (*gitleaksRules, error) {
	cfg := def.Config
	rules := maps.Clone(cfg.Rules)
	var keywords []string
	for id, rule := range rules {
		if off[id] || rule.Regex == nil {
			delete(rules, id) // off, or a rule on file paths only
			continue
		}
		for _, k := range rule.Keywords {
			keywords = append(keywords, strings.ToLower(k))
		}
	}
	index, err := newKeywordIndex(keywords)
	if err != nil {
		return nil, err
	}
	cfg.Rules = rules
	d := detect.NewDetector(cfg)
	d.MaxDecodeDepth = 0
	return &gitleaksRules{detector: d, keywords: index, stopWords: def.stopWords}, nil
}

// detect returns gitleaks' findings in v.
func (g *gitleaksRules) detect(v string) []report.Finding {
	if !g.keywords.in(v) {
		return nil
	}
	return slices.DeleteFunc(g.detector.DetectString(v), g.stopWords.allowed)
}
