package scrub

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// Gitleaks' token rules (a secret recognised by its own shape: AIza…, sk_live_…, npm_…, hf_…,
// a JWT) are written for code: the secret must start at a word boundary and end at a quote,
// whitespace, ';', a backslash escape or the end of the text:
//
//	\b(AIza[\w-]{35})(?:[\x60'"\s;]|\\[nr]|$)
//
// So a key followed by '/', '(', '=', '#', ':', '&', ')' … with no space (a URL's path
// https://x/AIzaSy…/more, a fragment, key=…&, f(…)) was not found, nor one after '_', which \b
// takes for a letter (id_AIzaSy…, _npm_…). The rules stay as gitleaks wrote them (their
// findings are checked against gitleaks' own detector); each token rule also runs a second time
// in a widened form, on texts that hold one of its keywords:
//
//	(?:^|[^0-9A-Za-z])(AIza[\w-]{35})(?:[^0-9A-Za-z_-]|$)
//
// that is, '_' also counts as a boundary before the secret, and any character that is neither
// a letter, a digit, '_' nor '-' ends it (gitleaks' own openshift-user-token rule ends its
// secret so: (?:[^\w-]|\z)). The secret is still group 1, with the rule's entropy threshold,
// allow-lists and stop words. A letter or digit touching the secret still keeps it from
// matching: that is what keeps sk- inside "task-management-…" and digits inside hex ids from
// being taken for keys. Rules written \bSECRET\b (aws-access-token, …) are widened the same way
// for '_' on either side.
//
// Rules whose secret does not start with a distinctive literal of its own are not widened: with
// a keyword elsewhere in the text, they take any 40 hex digits (sourcegraph), 15 digits and a
// '|' (facebook), 6 characters before "_…_mmk" (maxmind) or "s." and 24 characters (vault), and
// a wider boundary there would take commit ids in URLs and ordinary identifiers.
var notWidened = map[string]bool{
	"sourcegraph-access-token": true,
	"facebook-access-token":    true,
	"maxmind-license-key":      true,
	"vault-service-token":      true,
}

// tokenRulePattern is a token rule: optional (?i), \b, the secret as group 1, gitleaks' suffix.
var tokenRulePattern = regexp.MustCompile(`^((?:\(\?i\))?)\\b\((.*)\)\(\?:\[\\x60'"\\s;\]\|\\\\\[nr\]\|\$\)$`)

// boundedRulePattern is a rule written \bSECRET\b.
var boundedRulePattern = regexp.MustCompile(`^((?:\(\?i\))?)\\b(.*)\\b$`)

// widenedRule returns the widened form of a rule's regular expression, or false when the rule
// is no token rule (or is one of notWidened).
func widenedRule(id, re string) (string, bool) {
	if notWidened[id] {
		return "", false
	}
	suffix := `(?:[^0-9A-Za-z_-]|$)`
	m := tokenRulePattern.FindStringSubmatch(re)
	if m == nil {
		if m = boundedRulePattern.FindStringSubmatch(re); m == nil {
			return "", false
		}
		suffix = `(?:[^0-9A-Za-z]|$)`
	}
	// The secret must be a whole expression: then the parentheses around it in the rule are
	// its group, not the end of one group and the start of another.
	secret, err := syntax.Parse(m[2], syntax.Perl)
	if err != nil || secret.Op == syntax.OpEmptyMatch {
		return "", false
	}
	widened := m[1] + `(?:^|[^0-9A-Za-z])(` + m[2] + `)` + suffix
	if _, err := regexp.Compile(widened); err != nil {
		return "", false
	}
	return widened, true
}

// The widened rules run only on the runs of a text that can hold one of their secrets, not on
// the whole text: a second pass over a prompt full of keywords ("ey" is in "key", "they") cost
// 15 % more (`go test -run '^$' -bench Text/prompt_with_keywords ./scrub/`). Every secret of a
// widened rule is a run of letters, digits and `_+/=.\-` at least minWidenedRun long (the
// shortest: sk_live_ and 10 characters; a JWT's first part alone is 19; the others are 20 and
// more; TestWidenedRulesAreTheReviewedOnes lists them), preceded by '_' or by what is no part of
// the run. Each such run is written on a line of its own, so a character before or after it
// that is no part of the run reads as a line break, which the widened forms take as a boundary
// too. The secrets found are then looked for in the text itself (gitleaksFind).
const minWidenedRun = 18

func inWidenedRun(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_+/=.\\-", c) >= 0
}

// widenedRuns returns the runs of v that can hold a widened rule's secret, one a line, each
// once (a prompt repeats its URLs), and whether there is one.
func widenedRuns(v string) (string, bool) {
	var b strings.Builder
	var seen map[string]bool // made on the second run
	first := ""
	for i := 0; i < len(v); {
		if !inWidenedRun(v[i]) {
			i++
			continue
		}
		start := i
		for i < len(v) && inWidenedRun(v[i]) {
			i++
		}
		if i-start >= minWidenedRun {
			if b.Len() == 0 && start == 0 && i == len(v) {
				return v, true // the whole text is one run: no copy
			}
			run := v[start:i]
			if run == first || seen[run] {
				continue
			}
			if first == "" {
				first = run
			} else {
				if seen == nil {
					seen = map[string]bool{}
				}
				seen[run] = true
			}
			b.WriteString(run)
			b.WriteByte('\n')
		}
	}
	return b.String(), b.Len() > 0
}
