package normalize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// withSemconvToo writes, on each model call of the OpenInference fixture, what the case holds
// for it again as GenAI semconv attributes (which come first in precedence), as an
// instrumentation that writes both conventions does; edit changes the semconv side of the call
// on span id. It returns the traces and the case of the fixture as recorded.
func withSemconvToo(t *testing.T, edit func(a map[string]any)) (ptrace.Traces, *replaycase.Case, string) {
	t.Helper()
	asRecorded, findings := build(t, testfixtures.OpenInference)
	require.Empty(t, reasonsOf(findings, replaycase.ReasonConflictingConventions))
	td := testfixtures.Traces(t, testfixtures.OpenInference)
	edited := ""
	llmSteps := map[string]replaycase.Step{}
	for _, st := range asRecorded.Steps {
		if st.Kind == replaycase.StepLLM {
			llmSteps[st.SpanID] = st
		}
	}
	require.NotEmpty(t, llmSteps)
	eachSpan(td, func(sp ptrace.Span) {
		st, ok := llmSteps[sp.SpanID().String()]
		if !ok {
			return
		}
		text := func(v any) string {
			raw, err := json.Marshal(v)
			require.NoError(t, err)
			return string(raw)
		}
		attrs := map[string]any{
			"gen_ai.input.messages":      text(st.InputMessages),
			"gen_ai.output.messages":     text(st.OutputMessages),
			"gen_ai.request.model":       st.ModelConfig.RequestModel,
			"gen_ai.usage.input_tokens":  st.Usage.InputTokens,
			"gen_ai.usage.output_tokens": st.Usage.OutputTokens,
		}
		if edited == "" && edit != nil {
			edit(attrs)
			edited = st.SpanID
		}
		for k, v := range attrs {
			switch v := v.(type) {
			case string:
				sp.Attributes().PutStr(k, v)
			case int64:
				sp.Attributes().PutInt(k, v)
			}
		}
	})
	return td, asRecorded, edited
}

// Two conventions on one span that record the same thing are not flagged: instrumentations
// often write both forms of it.
func TestConventionsThatAgreeAreNotFlagged(t *testing.T) {
	td, asRecorded, _ := withSemconvToo(t, nil)
	c, findings, _ := Build(td, plog.NewLogs())
	assert.Empty(t, reasonsOf(findings, replaycase.ReasonConflictingConventions))
	for i, st := range asRecorded.Steps {
		assert.Equal(t, st.InputMessages, c.Steps[i].InputMessages)
		assert.Equal(t, st.OutputMessages, c.Steps[i].OutputMessages)
		assert.Equal(t, st.Usage, c.Steps[i].Usage)
	}
}

// Two conventions on one span that record different messages, models or token counts leave
// the case with one of two values (the first in precedence): the step says so
// (conflicting_conventions), naming what differs.
func TestConventionsThatDisagreeAreFlagged(t *testing.T) {
	for _, tc := range []struct {
		name, detail string
		edit         func(a map[string]any)
	}{
		{"input messages", "openinference: input messages", func(a map[string]any) {
			a["gen_ai.input.messages"] = strings.Replace(a["gen_ai.input.messages"].(string), "Paris", "Lyon", 1)
		}},
		{"output messages", "openinference: output messages", func(a map[string]any) {
			a["gen_ai.output.messages"] = `[{"role":"assistant","parts":[{"type":"text","content":"another answer"}]}]`
		}},
		{"request model", `openinference: llm.invocation_parameters model is "gpt-4o-mini"; an earlier convention's "gpt-4.1" is kept`, func(a map[string]any) {
			a["gen_ai.request.model"] = "gpt-4.1"
		}},
		{"token count", "openinference: llm.token_count.prompt is", func(a map[string]any) {
			a["gen_ai.usage.input_tokens"] = a["gen_ai.usage.input_tokens"].(int64) + 1
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td, _, edited := withSemconvToo(t, tc.edit)
			require.NotEmpty(t, edited)
			_, findings, _ := Build(td, plog.NewLogs())
			flagged := reasonsOf(findings, replaycase.ReasonConflictingConventions)
			require.Len(t, flagged, 1, "findings: %+v", findings)
			assert.Equal(t, edited, flagged[0].SpanID)
			assert.Contains(t, flagged[0].Detail, tc.detail)
		})
	}
}

// No run recorded by a real instrumentation gets the finding: where they write two conventions
// on one span, the two agree.
func TestRecordedRunsHaveNoConflictingConventions(t *testing.T) {
	check := func(name string, td ptrace.Traces, ld plog.Logs) {
		_, findings, _ := Build(td, ld)
		assert.Empty(t, reasonsOf(findings, replaycase.ReasonConflictingConventions), name)
	}
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.OTelNoContent, testfixtures.Traceloop, testfixtures.OpenInference} {
		check(run, testfixtures.Traces(t, run), testfixtures.Logs(t, run))
	}
	for _, lang := range []string{"node", "python"} {
		dirs, err := os.ReadDir(filepath.Join("testdata", lang))
		require.NoError(t, err)
		for _, d := range dirs {
			if d.IsDir() {
				td, ld := recordedRun(t, lang, d.Name())
				check(lang+"/"+d.Name(), td, ld)
			}
		}
	}
	files, err := os.ReadDir(filepath.Join(testfixtures.Dir(), "..", "reference"))
	require.NoError(t, err)
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.Name(), ".langfuse-export.json"):
			check(f.Name(), langfuseTraces(t, f.Name()), plog.NewLogs())
		case strings.Contains(f.Name(), "raw-spans"):
			for _, td := range jsSpanTraces(t, f.Name()) {
				check(f.Name(), td, plog.NewLogs())
			}
		}
	}
}
