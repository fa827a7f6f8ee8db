package casediff

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtureCase is the case the replay_case processor builds from a recorded run.
func fixtureCase(t *testing.T, run string) *replaycase.Case {
	t.Helper()
	cases := testpipeline.Run(t, nil, run)
	require.Len(t, cases, 1)
	return cases[0]
}

// golden compares the JSON and Markdown renderings of r with testdata/name.{json,md}.
func golden(t *testing.T, name string, r Report) {
	t.Helper()
	var js, md bytes.Buffer
	require.NoError(t, WriteJSON(&js, r))
	require.NoError(t, WriteMarkdown(&md, r))
	for ext, got := range map[string][]byte{".json": js.Bytes(), ".md": md.Bytes()} {
		path := filepath.Join("testdata", name+ext)
		if *update {
			require.NoError(t, os.WriteFile(path, got, 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run: go test ./casediff/ -update")
		assert.Equal(t, string(want), string(got), "%s differs from the golden file (go test ./casediff/ -update)", path)
	}
}

func TestACaseEqualsItself(t *testing.T) {
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent} {
		// Two builds of the run, and a JSON round trip of one: equal values, not one pointer.
		c := fixtureCase(t, run)
		assert.Empty(t, Compare(c, fixtureCase(t, run)).Findings, run)
		assert.Empty(t, Compare(c, clone(t, c)).Findings, run)
	}
}

// The same agent run recorded by two instrumentations differs only where the instrumentations
// record different things.
func TestTwoInstrumentationsOfOneRun(t *testing.T) {
	golden(t, "otel-events_vs_traceloop", Compare(fixtureCase(t, testfixtures.OTelEvents), fixtureCase(t, testfixtures.Traceloop)))
}

// edited is the otel-events case as a changed agent would have run it: another system prompt,
// another temperature, other tool arguments, an extra tool call inserted before the recorded
// one, the retrieval returning other documents in another order, a different answer.
func edited(t *testing.T) *replaycase.Case {
	b := *clone(t, fixtureCase(t, testfixtures.OTelEvents))
	b.CaseID = "edited"
	for i := range b.Steps {
		st := &b.Steps[i]
		if st.Kind != replaycase.StepLLM {
			continue
		}
		temp := 0.9
		st.ModelConfig.Temperature = &temp
		st.CallSiteID = "cs_changed_" + st.CallSiteID
		for j := range st.InputMessages {
			if st.InputMessages[j].Role == "system" {
				st.InputMessages[j].Parts[0].Content = "You are a terse weather bot."
			}
		}
		if len(st.SystemInstructions) > 0 {
			st.SystemInstructions[0].Content = "You are a terse weather bot."
		}
	}
	require.NotEmpty(t, b.ToolCalls)
	b.ToolCalls[0].Arguments = `{"city":"Lyon","unit":"celsius"}`
	b.ToolCalls = append([]replaycase.ToolCall{{ID: "call_0", Name: "lookup_user", Arguments: `{"user":"u1"}`, Result: `{"city":"Lyon"}`}}, b.ToolCalls...)
	require.NotEmpty(t, b.RetrievalRefs)
	docs := b.RetrievalRefs[0].Documents
	require.GreaterOrEqual(t, len(docs), 1)
	b.RetrievalRefs[0].Documents = append([]replaycase.Document{{ID: "doc-new"}}, docs[:len(docs)-1]...)
	b.FinalOutput.Parts[0].Content = "Lyon is sunny."
	return &b
}

func TestChangedAgentFindingsByDecisionPoint(t *testing.T) {
	a := fixtureCase(t, testfixtures.OTelEvents)
	r := Compare(a, edited(t))
	golden(t, "otel-events_vs_edited", r)
	assert.Equal(t, 1, r.Counts[ToolCallAdded], "the inserted call is one insertion, not a shift of every later call")
	assert.Zero(t, r.Counts[ToolCallRemoved])
	assert.Equal(t, 1, r.Counts[ToolArgsChanged], "only the city changed")
	assert.Equal(t, 1, r.Counts[AnswerChanged])
	assert.NotZero(t, r.Counts[RetrievalDrift])
	assert.NotZero(t, r.Counts[PromptChanged])
	assert.NotZero(t, r.Counts[ModelConfigChanged])
	var points []DecisionPoint
	for _, f := range r.Findings {
		if len(points) == 0 || points[len(points)-1] != f.DecisionPoint {
			points = append(points, f.DecisionPoint)
		}
	}
	assert.Equal(t, []DecisionPoint{PointRetrieval, PointTools, PointModel, PointAnswer}, points, "ordered by decision point")
}

// A removed step is reported as removed, and the steps after it still pair with their
// counterparts.
func TestRemovedToolCallKeepsLaterCallsPaired(t *testing.T) {
	a := &replaycase.Case{ToolCalls: []replaycase.ToolCall{
		{Name: "search", Arguments: `{"q":"a"}`}, {Name: "fetch", Arguments: `{"url":"x"}`}, {Name: "summarize", Arguments: `{}`},
	}}
	b := &replaycase.Case{ToolCalls: []replaycase.ToolCall{
		{Name: "fetch", Arguments: `{"url":"x"}`}, {Name: "summarize", Arguments: `{"short":true}`},
	}}
	r := Compare(a, b)
	require.Len(t, r.Findings, 2, "%+v", r.Findings)
	assert.Equal(t, ToolCallRemoved, r.Findings[0].Type)
	assert.Equal(t, "tool_calls[0]", r.Findings[0].PathA)
	assert.Equal(t, ToolArgsChanged, r.Findings[1].Type)
	assert.Equal(t, "tool_calls[2].arguments.short", r.Findings[1].PathA)
	assert.Equal(t, "tool_calls[1].arguments.short", r.Findings[1].PathB)
}

func TestAlign(t *testing.T) {
	eq := func(a, b string) func(i, j int) bool { return func(i, j int) bool { return a[i] == b[j] } }
	never := func(int, int) bool { return false }
	always := func(int, int) bool { return true }
	for _, c := range []struct {
		a, b    string
		similar func(int, int) bool
		want    []pair
	}{
		{"abc", "abc", never, []pair{{0, 0}, {1, 1}, {2, 2}}},
		{"abc", "xabc", never, []pair{{-1, 0}, {0, 1}, {1, 2}, {2, 3}}},
		{"abc", "ac", never, []pair{{0, 0}, {1, -1}, {2, 1}}},
		{"abc", "axc", always, []pair{{0, 0}, {1, 1}, {2, 2}}},
		{"abc", "axc", never, []pair{{0, 0}, {1, -1}, {-1, 1}, {2, 2}}},
		{"", "ab", never, []pair{{-1, 0}, {-1, 1}}},
	} {
		assert.Equal(t, c.want, align(len(c.a), len(c.b), eq(c.a, c.b), c.similar), "%s → %s", c.a, c.b)
	}
}

// Tool arguments are compared as JSON values: integers beyond 2^53 (account, order and
// message ids) must not collapse into one float64 and hide a changed argument.
func TestLargeIntegersInToolArgumentsDiffer(t *testing.T) {
	a := &replaycase.Case{ToolCalls: []replaycase.ToolCall{{Name: "refund", Arguments: `{"order_id":9007199254740993,"amount":1.0}`}}}
	b := &replaycase.Case{ToolCalls: []replaycase.ToolCall{{Name: "refund", Arguments: `{"order_id":9007199254740992,"amount":1}`}}}
	r := Compare(a, b)
	require.Len(t, r.Findings, 1, "%+v", r.Findings)
	assert.Equal(t, ToolArgsChanged, r.Findings[0].Type)
	assert.Equal(t, "tool_calls[0].arguments.order_id", r.Findings[0].PathA)
	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, r))
	assert.Contains(t, js.String(), `"before": 9007199254740993`, "the recorded value as written")
	assert.Empty(t, Compare(a, a).Findings)
}

// An argument sent as null and one not sent are different calls (an API may reset a field on
// null and keep it when absent), as are arrays of different lengths: both compared equal, the
// missing value and JSON null reading alike.
func TestNullAndAbsentArgumentsDiffer(t *testing.T) {
	for _, tc := range []struct{ a, b, path, before, after string }{
		{`{"coupon":null}`, `{}`, "tool_calls[0].arguments.coupon", `"before": null`, ""},
		{`{"ids":[1]}`, `{"ids":[1,null]}`, "tool_calls[0].arguments.ids[1]", "", `"after": null`},
	} {
		a := &replaycase.Case{ToolCalls: []replaycase.ToolCall{{Name: "order", Arguments: tc.a}}}
		b := &replaycase.Case{ToolCalls: []replaycase.ToolCall{{Name: "order", Arguments: tc.b}}}
		r := Compare(a, b)
		require.Len(t, r.Findings, 1, "%s vs %s: %+v", tc.a, tc.b, r.Findings)
		assert.Equal(t, ToolArgsChanged, r.Findings[0].Type)
		assert.Equal(t, tc.path, r.Findings[0].PathA)
		var js bytes.Buffer
		require.NoError(t, WriteJSON(&js, r))
		for _, want := range []string{tc.before, tc.after} {
			if want != "" {
				assert.Contains(t, js.String(), want)
			}
		}
		assert.Empty(t, Compare(a, a).Findings)
		assert.Empty(t, Compare(b, b).Findings)
	}
}

// The tools offered to a model call are part of what it was asked: an agent whose tool
// description or parameter schema changed makes other decisions, and its calls (whose call-site
// ids change with the tools) used to pair with the recorded ones and compare equal. A schema
// written with its keys in another order is the same schema.
func TestChangedToolDefinitionsAreFound(t *testing.T) {
	a := fixtureCase(t, testfixtures.Traceloop)
	b := clone(t, a)
	first := -1
	for i := range b.Steps {
		st := &b.Steps[i]
		if st.Kind != replaycase.StepLLM {
			continue
		}
		require.NotEmpty(t, st.ToolDefinitions)
		st.CallSiteID = "cs_changed_" + st.CallSiteID // the call-site id covers the tools
		if first < 0 {
			first = st.Index
			st.ToolDefinitions[0].Description = "Weather for a city; never call it twice"
			st.ToolDefinitions[0].Parameters = `{"type":"object","required":["city"],"properties":{"unit":{"type":"string","enum":["celsius","fahrenheit"]},"city":{"type":"string"}}}`
		}
	}
	r := Compare(a, b)
	require.Len(t, r.Findings, 1, "%+v", r.Findings)
	f := r.Findings[0]
	assert.Equal(t, ModelConfigChanged, f.Type)
	assert.Equal(t, fmt.Sprintf("steps[%d].tool_definitions[0].description", first), f.PathA)
	assert.Equal(t, f.PathA, f.PathB)
	assert.Equal(t, "Current weather for a city", f.Before)

	// Tools recorded on one side only differ, as a sampling parameter recorded on one side does.
	c := clone(t, a)
	for i := range c.Steps {
		c.Steps[i].ToolDefinitions = nil
	}
	assert.NotZero(t, Compare(a, c).Counts[ModelConfigChanged])
	assert.Empty(t, Compare(a, clone(t, a)).Findings)
}

// A prompt is more than its text: the same question about another image (or with the image
// left out) is another question, and used to compare equal.
func TestChangedPromptMediaIsFound(t *testing.T) {
	withImage := func(uri, blob string) *replaycase.Case {
		c := clone(t, fixtureCase(t, testfixtures.OTelEvents))
		for i := range c.Steps {
			st := &c.Steps[i]
			for j := range st.InputMessages {
				if m := &st.InputMessages[j]; m.Role == "user" {
					if uri != "" {
						m.Parts = append(m.Parts, replaycase.Part{Type: "uri", Modality: "image", URI: uri})
					}
					if blob != "" {
						m.Parts = append(m.Parts, replaycase.Part{Type: "blob", MimeType: "image/png", Modality: "image", Content: blob})
					}
				}
			}
		}
		return c
	}
	a := withImage("https://example.com/paris.png", "iVBORw0KGgoAAAA")
	for name, b := range map[string]*replaycase.Case{
		"another image":      withImage("https://example.com/lyon.png", "iVBORw0KGgoAAAA"),
		"another blob":       withImage("https://example.com/paris.png", "iVBORw0KGgoBBBB"),
		"the image left out": withImage("", ""),
	} {
		r := Compare(a, b)
		assert.NotZero(t, r.Counts[PromptChanged], "%s: %+v", name, r.Findings)
	}
	assert.Empty(t, Compare(a, withImage("https://example.com/paris.png", "iVBORw0KGgoAAAA")).Findings)
}
