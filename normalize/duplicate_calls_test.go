package normalize

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// A content-less model span is folded only when it matches exactly one step with content and
// that step matches only it: parallel calls whose spans overlap stay apart (and the evidence
// check quarantines the empty one), as does a call of another model.
func TestFoldDuplicateModelCallsOnlyWhenUnambiguous(t *testing.T) {
	t0 := time.Unix(1764460800, 0)
	step := func(id string, content bool, from, to int, model string) normalized {
		text := "answer of " + id
		st := replaycase.Step{Kind: replaycase.StepLLM, SpanID: id, ParentSpanID: "root", StartTime: t0.Add(time.Duration(from) * time.Millisecond),
			EndTime: t0.Add(time.Duration(to) * time.Millisecond), ModelConfig: replaycase.ModelConfig{Provider: "anthropic", RequestModel: model}}
		if content {
			st.OutputMessages = []replaycase.Message{{Role: "assistant", Parts: []replaycase.Part{{Type: "text", Content: text}}}}
		}
		return normalized{Step: st}
	}
	ids := func(steps []normalized) (out []string) {
		for _, s := range steps {
			out = append(out, s.Step.SpanID)
		}
		return out
	}
	// One empty span overlapping one content span: folded.
	require.Equal(t, []string{"content"}, ids(foldDuplicateModelCalls([]normalized{step("sdk", false, 0, 10, "m"), step("content", true, 1, 9, "m")})))
	require.Equal(t, []string{"content"}, ids(foldDuplicateModelCalls([]normalized{step("sdk", false, 0, 10, "m"), step("content", true, 1, 11, "m")})))
	// Calls one after the other, touching ends: each folds into its own.
	require.Equal(t, []string{"a", "b"}, ids(foldDuplicateModelCalls([]normalized{step("sdk1", false, 0, 10, "m"), step("a", true, 1, 10, "m"), step("sdk2", false, 10, 20, "m"), step("b", true, 10, 19, "m")})))
	// One empty span containing two content spans (parallel calls): kept.
	require.Len(t, foldDuplicateModelCalls([]normalized{step("sdk", false, 0, 10, "m"), step("a", true, 1, 9, "m"), step("b", true, 2, 8, "m")}), 3)
	// Two empty spans both containing one content span: kept.
	require.Len(t, foldDuplicateModelCalls([]normalized{step("sdk1", false, 0, 10, "m"), step("sdk2", false, 0, 11, "m"), step("a", true, 1, 9, "m")}), 3)
	// Two records with content of one call (same request, same answer): the later one goes.
	same := func(id string, from, to int) normalized {
		n := step(id, true, from, to, "m")
		n.Step.OutputMessages[0].Parts[0].Content = "the same answer"
		return n
	}
	require.Equal(t, []string{"first"}, ids(foldDuplicateModelCalls([]normalized{same("first", 0, 10), same("second", 1, 10)})))
	// Two calls with the same request and different answers (sampling): both kept.
	require.Len(t, foldDuplicateModelCalls([]normalized{step("a", true, 0, 10, "m"), step("b", true, 1, 10, "m")}), 2)
	// Another model: kept.
	require.Len(t, foldDuplicateModelCalls([]normalized{step("sdk", false, 0, 10, "m"), step("a", true, 1, 9, "other")}), 2)
}
