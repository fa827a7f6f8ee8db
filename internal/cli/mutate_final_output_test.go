package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// mutateOne runs `reprise mutate` on the dataset at root and returns the derived case as the
// dataset holds it.
func mutateOne(t *testing.T, root, caseID string, args ...string) *replaycase.Case {
	t.Helper()
	code, out, errOut := run(t, append([]string{"mutate", caseID, "--dataset", root}, args...)...)
	require.Equal(t, ExitOK, code, errOut)
	c, err := loadCase(strings.TrimSpace(out), root)
	require.NoError(t, err)
	return c
}

// A run without a root agent output ended with its last model call's answer: its
// final_output is that call's first output message (docs/case-model.md). Editing that call's
// response edits the run's answer too; editing an earlier call does not.
func TestMutateLastResponseIsTheFinalOutput(t *testing.T) {
	for _, fixture := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference} {
		t.Run(fixture, func(t *testing.T) {
			root, cases := fixtureDataset(t, fixture)
			orig := cases[0]
			require.NotNil(t, orig.FinalOutput)
			require.Equal(t, orig.Steps[3].OutputMessages[0], *orig.FinalOutput, "the fixture's answer is its last model call's")

			derived := mutateOne(t, root, orig.CaseID, "--step", "3", "--response", `"It is snowing in Paris."`)
			require.NotNil(t, derived.FinalOutput)
			assert.Equal(t, derived.Steps[3].OutputMessages[0], *derived.FinalOutput)
			assert.Equal(t, "It is snowing in Paris.", messageText(*derived.FinalOutput))
			code, out, errOut := run(t, "show", derived.CaseID, "--dataset", root)
			require.Equal(t, ExitOK, code, errOut)
			assert.Contains(t, out, "answer: It is snowing in Paris.")

			earlier := mutateOne(t, root, orig.CaseID, "--step", "1", "--response", `"It is sunny in Paris."`)
			assert.Equal(t, orig.FinalOutput, earlier.FinalOutput, "step 1 did not give the answer")
		})
	}
}

// A run whose root agent span recorded its own output ended with that output, not with its
// last model call's: editing the call leaves final_output as the agent recorded it.
func TestMutateKeepsTheAgentsOwnOutput(t *testing.T) {
	const agentAnswer = "The agent's own summary: mild in Paris."
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	rootSpan := spanNamed(t, td, "invoke_agent weather-bot")
	rootSpan.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","finish_reason":"stop","parts":[{"type":"text","content":"`+agentAnswer+`"}]}]`)
	root := t.TempDir()
	w := testdataset.Writer(t, root, "zstd")
	cases := testpipeline.RunTraces(t, w, []string{testfixtures.Traceloop}, []ptrace.Traces{td})
	require.NoError(t, w.Shutdown(context.Background()))
	require.Len(t, cases, 1)
	orig := cases[0]
	require.NotNil(t, orig.FinalOutput)
	require.Equal(t, agentAnswer, messageText(*orig.FinalOutput))

	derived := mutateOne(t, root, orig.CaseID, "--step", "3", "--response", `"It is snowing in Paris."`)
	assert.Equal(t, "It is snowing in Paris.", messageText(derived.Steps[3].OutputMessages[0]))
	require.NotNil(t, derived.FinalOutput)
	assert.Equal(t, agentAnswer, messageText(*derived.FinalOutput), "the agent's recorded output is not the model call's")
}

// A quarantined run whose last model call recorded a message without content has that empty
// message as its answer; a response edited in becomes the answer.
func TestMutateFillsAnEmptyAnswer(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelNoContent)
	orig := cases[0]
	require.NotNil(t, orig.FinalOutput)
	require.Empty(t, orig.FinalOutput.Parts)

	derived := mutateOne(t, root, orig.CaseID, "--step", "3", "--response", `"It is snowing in Paris."`)
	require.NotNil(t, derived.FinalOutput)
	assert.Equal(t, "It is snowing in Paris.", messageText(*derived.FinalOutput))
}

func spanNamed(t *testing.T, td ptrace.Traces, name string) ptrace.Span {
	t.Helper()
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if spans.At(k).Name() == name {
					return spans.At(k)
				}
			}
		}
	}
	require.Failf(t, "no span", "no span named %q", name)
	return ptrace.Span{}
}
