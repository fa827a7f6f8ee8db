package normalize

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// modelStep is an Anthropic model call of model under the span "root", from..to ms, that
// answered "answer of <id>" when content is set and recorded no content otherwise.
func modelStep(id string, content bool, from, to int, model string) normalized {
	t0 := time.Unix(1764460800, 0)
	st := replaycase.Step{Kind: replaycase.StepLLM, SpanID: id, ParentSpanID: "root", StartTime: t0.Add(time.Duration(from) * time.Millisecond),
		EndTime: t0.Add(time.Duration(to) * time.Millisecond), ModelConfig: replaycase.ModelConfig{Provider: "anthropic", RequestModel: model}}
	if content {
		st.OutputMessages = []replaycase.Message{{Role: "assistant", Parts: []replaycase.Part{{Type: "text", Content: "answer of " + id}}}}
	}
	return normalized{Step: st}
}

// stepIDs lists the span ids of steps, in order.
func stepIDs(steps []normalized) (out []string) {
	for _, s := range steps {
		out = append(out, s.Step.SpanID)
	}
	return out
}

// A content-less model span is folded only when it matches exactly one step with content and
// that step matches only it: parallel calls whose spans overlap stay apart (and the evidence
// check quarantines the empty one), as does a call of another model.
func TestFoldDuplicateModelCallsOnlyWhenUnambiguous(t *testing.T) {
	// One empty span overlapping one content span: folded.
	require.Equal(t, []string{"content"}, stepIDs(foldDuplicateModelCalls([]normalized{modelStep("sdk", false, 0, 10, "m"), modelStep("content", true, 1, 9, "m")})))
	require.Equal(t, []string{"content"}, stepIDs(foldDuplicateModelCalls([]normalized{modelStep("sdk", false, 0, 10, "m"), modelStep("content", true, 1, 11, "m")})))
	// Calls one after the other, touching ends: each folds into its own.
	require.Equal(t, []string{"a", "b"}, stepIDs(foldDuplicateModelCalls([]normalized{modelStep("sdk1", false, 0, 10, "m"), modelStep("a", true, 1, 10, "m"), modelStep("sdk2", false, 10, 20, "m"), modelStep("b", true, 10, 19, "m")})))
	// One empty span containing two content spans (parallel calls): kept.
	require.Len(t, foldDuplicateModelCalls([]normalized{modelStep("sdk", false, 0, 10, "m"), modelStep("a", true, 1, 9, "m"), modelStep("b", true, 2, 8, "m")}), 3)
	// Two empty spans both containing one content span: kept.
	require.Len(t, foldDuplicateModelCalls([]normalized{modelStep("sdk1", false, 0, 10, "m"), modelStep("sdk2", false, 0, 11, "m"), modelStep("a", true, 1, 9, "m")}), 3)
	// Two records with content of one call (same request, same answer): the later one goes.
	same := func(id string, from, to int) normalized {
		n := modelStep(id, true, from, to, "m")
		n.Step.OutputMessages[0].Parts[0].Content = "the same answer"
		return n
	}
	require.Equal(t, []string{"first"}, stepIDs(foldDuplicateModelCalls([]normalized{same("first", 0, 10), same("second", 1, 10)})))
	// Two calls with the same request and different answers (sampling): both kept.
	require.Len(t, foldDuplicateModelCalls([]normalized{modelStep("a", true, 0, 10, "m"), modelStep("b", true, 1, 10, "m")}), 2)
	// Another model: kept.
	require.Len(t, foldDuplicateModelCalls([]normalized{modelStep("sdk", false, 0, 10, "m"), modelStep("a", true, 1, 9, "other")}), 2)
}

// stretchSDKSpans makes each of the Anthropic SDK's own spans end late, as its stream
// finalisation does under load, so that it overlaps the next call's spans too.
func stretchSDKSpans(td ptrace.Traces, by time.Duration) {
	for s := range pdatawalk.Spans(td) {
		if s.Scope.Scope().Name() == "com.anthropic.sdk.typescript" {
			s.Span.SetEndTimestamp(s.Span.EndTimestamp() + pcommon.Timestamp(by))
		}
	}
}

// The SDK's content-less span of a streamed call is a sibling of the instrumentation's span,
// and under load it may end after the next call began. It is still folded into its own call,
// matched by what both spans recorded of the request and response (token counts, models,
// parameters), not by which spans overlap in time: the runs build as they do unstretched.
func TestSDKSpanFoldsByEvidenceWhenItOverlapsTheNextCall(t *testing.T) {
	for _, run := range []string{"anthropic-traceloop-stream", "anthropic-openinference-stream", "anthropic-traceloop-create"} {
		want, wantFindings, _ := Build(recordedRun(t, "node", run))
		td, ld := recordedRun(t, "node", run)
		stretchSDKSpans(td, 50*time.Millisecond)
		got, findings, _ := Build(td, ld)
		require.Equal(t, wantFindings, findings, run)
		require.Equal(t, llmStepIDs(want), llmStepIDs(got), run)
		require.Len(t, llmStepIDs(got), 2, "%s: two calls, two model steps", run)
	}
}

func llmStepIDs(c *replaycase.Case) (out []string) {
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			out = append(out, st.SpanID+" "+st.ResponseID)
		}
	}
	return out
}

// Built from steps: a content-less span that overlaps two sibling calls in time is folded into
// the one whose token counts (or response id) it recorded; when it recorded none, or two calls
// agree with it, it stays (and the evidence check reports it).
func TestFoldMatchesTheCallThatRecordedTheSameUsage(t *testing.T) {
	step := func(id string, content bool, from, to int, in, out int64) normalized {
		n := modelStep(id, content, from, to, "m")
		n.Step.Usage = replaycase.Usage{InputTokens: in, OutputTokens: out}
		return n
	}
	// sdk1 runs 0–15 ms, past the start of call b at 11 ms: it overlaps a and b.
	calls := []normalized{step("a", true, 0, 10, 41, 15), step("sdk1", false, 0, 15, 41, 15), step("b", true, 11, 20, 42, 15), step("sdk2", false, 11, 21, 42, 15)}
	require.Equal(t, []string{"a", "b"}, stepIDs(foldDuplicateModelCalls(calls)))
	// The response id the SDK recorded goes to the step it folded into.
	withID := slices.Clone(calls)
	withID[1].Step.ResponseID, withID[3].Step.ResponseID = "msg_1", "msg_2"
	folded := foldDuplicateModelCalls(withID)
	require.Equal(t, "msg_1", folded[0].Step.ResponseID)
	require.Equal(t, "msg_2", folded[1].Step.ResponseID)
	// Two calls with the same token counts: sdk1 matches both, so nothing tells which; it stays.
	same := []normalized{step("a", true, 0, 10, 41, 15), step("sdk1", false, 0, 15, 41, 15), step("b", true, 11, 20, 41, 15)}
	require.Len(t, foldDuplicateModelCalls(same), 3)
	// Token counts that disagree are another call's, whatever the timing.
	require.Len(t, foldDuplicateModelCalls([]normalized{step("a", true, 0, 10, 41, 15), step("sdk", false, 0, 10, 99, 15)}), 2)
}
