package replayext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDiffNamesPaths(t *testing.T) {
	rec := map[string]any{"messages": []any{map[string]any{"role": "user", "text": "Paris"}}, "model": "m", "n": 1.0}
	req := map[string]any{"messages": []any{map[string]any{"role": "user", "text": "Lyon"}, map[string]any{"role": "user"}}, "model": "m", "n": 2.0}
	d := diff("", rec, req, nil)
	assert.Equal(t, []string{"messages[0].text", "messages[1]", "n"}, paths(d))
	assert.Equal(t, "Paris", d[0].Recorded)
	assert.Equal(t, "Lyon", d[0].Requested)
	assert.Empty(t, diff("", rec, rec, nil))
}

func TestDiffIsBounded(t *testing.T) {
	var a, b []any
	for i := range 100 {
		a, b = append(a, i), append(b, -i-1)
	}
	assert.Len(t, diff("", a, b, nil), maxDifferences)
}

// The paths never tell whether a guessed value is right: objects with different keys are
// reported whole (a key may be a scrubbed value), and a string holding a placeholder is
// always reported, equal or not.
func TestDiffPathsDoNotDependOnGuessedValues(t *testing.T) {
	recorded := map[string]any{"phone": "<secret:phone:aaaaaaaaaaaa>", "city": "Paris"}
	right := map[string]any{"phone": "<secret:phone:aaaaaaaaaaaa>", "city": "Lyon"}
	wrong := map[string]any{"phone": "<secret:phone:bbbbbbbbbbbb>", "city": "Lyon"}
	assert.Equal(t, paths(diff("", recorded, wrong, nil)), paths(diff("", recorded, right, nil)))
	assert.Equal(t, []string{"city", "phone"}, paths(diff("", recorded, right, nil)))

	keyed := map[string]any{"<secret:email:aaaaaaaaaaaa>": 1.0}
	assert.Equal(t, []string{"args"}, paths(diff("args", keyed, map[string]any{"<secret:email:aaaaaaaaaaaa>": 2.0}, nil)))
	assert.Equal(t, []string{"args"}, paths(diff("args", keyed, map[string]any{"<secret:email:bbbbbbbbbbbb>": 2.0}, nil)))
	assert.True(t, equalJSON(recorded, map[string]any{"phone": "<secret:phone:aaaaaaaaaaaa>", "city": "Paris"}), "matching is plain equality: the same placeholder matches")
	assert.False(t, equalJSON(recorded, map[string]any{"phone": "<secret:phone:bbbbbbbbbbbb>", "city": "Paris"}), "another placeholder does not")
}
