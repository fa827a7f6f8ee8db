package cli

import (
	"regexp"
	"sort"
	"strings"

	"github.com/reprise-dev/reprise/replaycase"
)

// assertionResult is one of the recorded case's assertions, evaluated on the replayed run.
// Passed is nil when the assertion is free text that `reprise ci` cannot evaluate; it is then
// reported, not judged.
type assertionResult struct {
	Name     string `json:"name"`
	Expected string `json:"expected"`
	Passed   *bool  `json:"passed,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// evaluateAssertions checks the assertions the processor extracted into the recorded case
// against the replayed run. An assertion's name says how: *_contains — the answer contains
// the value (case-insensitive); *_regex — the answer matches the regular expression;
// *_tool — the run called the tool of that name; anything else is reported unevaluated.
func evaluateAssertions(recorded, replayed *replaycase.Case) []assertionResult {
	var out []assertionResult
	answer := ""
	if replayed.FinalOutput != nil {
		answer = messageText(*replayed.FinalOutput)
	}
	for _, name := range sortedKeys(recorded.Assertions) {
		want := recorded.Assertions[name]
		a := assertionResult{Name: name, Expected: want}
		switch {
		case strings.HasSuffix(name, "_contains"):
			a.Passed = ptr(strings.Contains(strings.ToLower(answer), strings.ToLower(want)))
		case strings.HasSuffix(name, "_regex"):
			re, err := regexp.Compile(want)
			if err != nil {
				a.Passed, a.Detail = ptr(false), "invalid regular expression: "+err.Error()
				break
			}
			a.Passed = ptr(re.MatchString(answer))
		case strings.HasSuffix(name, "_tool"):
			called := false
			for _, tc := range replayed.ToolCalls {
				called = called || tc.Name == want
			}
			a.Passed = ptr(called)
		default:
			a.Detail = "free text: not evaluated (name it *_contains, *_regex or *_tool to check it)"
		}
		out = append(out, a)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
