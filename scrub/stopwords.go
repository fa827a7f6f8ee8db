package scrub

import (
	"maps"
	"strings"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/report"
)

// gitleaks drops a finding whose secret contains a stop word of its rule's allow-list
// ("000000", "example", 1,446 words for generic-api-key). It indexes those words in a trie
// that keeps 256 int64 per state: 8 MB for the default rules, more than everything else in the
// rule set. So the scrubber takes the stop words out of the allow-lists that are met by any one
// of their checks (gitleaks' default "OR") and drops those findings itself, with the same
// test on a keywordIndex of the same words (~0.3 MB; `go test -count 1 -run
// TestKeywordIndexIsSmall -v ./scrub/` logs both sizes). Findings come out the same: such an
// allow-list allows a finding when a regular expression or a stop word matches, the two are
// independent, and gitleaks' last step (dropping a generic finding that another rule also
// found) never depends on a generic finding being present.

// stopWords holds, per rule id, the stop words moved out of the rule's allow-lists.
type stopWords map[string]*keywordIndex

// withoutStopWords returns cfg with the stop words of its rules' "OR" allow-lists moved into
// stopWords; an allow-list left with no check is removed.
func withoutStopWords(cfg config.Config) (config.Config, stopWords, error) {
	moved := stopWords{}
	rules := maps.Clone(cfg.Rules)
	for id, rule := range rules {
		var kept []*config.Allowlist
		var words []string
		for _, a := range rule.Allowlists {
			if len(a.StopWords) == 0 || a.MatchCondition != config.AllowlistMatchOr {
				kept = append(kept, a)
				continue
			}
			words = append(words, a.StopWords...) // lower-cased by gitleaks
			if len(a.Regexes) == 0 && len(a.Paths) == 0 && len(a.Commits) == 0 {
				continue
			}
			rest := &config.Allowlist{Description: a.Description, MatchCondition: a.MatchCondition, Commits: a.Commits,
				Paths: a.Paths, RegexTarget: a.RegexTarget, Regexes: a.Regexes}
			if err := rest.Validate(); err != nil {
				return config.Config{}, nil, err
			}
			kept = append(kept, rest)
		}
		if len(words) == 0 {
			continue
		}
		index, err := newKeywordIndex(words)
		if err != nil {
			return config.Config{}, nil, err
		}
		moved[id] = index
		rule.Allowlists = kept
		rules[id] = rule
	}
	cfg.Rules = rules
	return cfg, moved, nil
}

// allowed reports whether gitleaks' allow-list would have dropped f for a stop word: the
// secret, lower-cased, contains one (an empty secret never does).
func (s stopWords) allowed(f report.Finding) bool {
	index := s[f.RuleID]
	return index != nil && f.Secret != "" && index.in(strings.ToLower(f.Secret))
}
