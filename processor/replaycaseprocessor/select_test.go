package replaycaseprocessor

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.yaml.in/yaml/v3"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline/corpus"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadata"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// selectRules is the rule set of the guide's first recipe: every kind of failure or complaint.
var selectRules = map[string]string{
	"error_root":        `IsRootSpan() and span.status.code == STATUS_CODE_ERROR`,
	"failed_tool":       `span.attributes["gen_ai.operation.name"] == "execute_tool" and span.status.code == STATUS_CODE_ERROR`,
	"low_score":         `log.event_name == "gen_ai.evaluation.result" and Double(log.attributes["gen_ai.evaluation.score.value"]) < 0.5`,
	"negative_feedback": `span.attributes["app.user_feedback"] == "negative"`,
}

// run is one recorded run (the otel-events fixture) under trace id n, changed by edit.
type run struct {
	traces ptrace.Traces
	logs   plog.Logs
	tid    pcommon.TraceID
	id     string
}

func recordedRun(t *testing.T, fixture string, n int, edit func(ptrace.Span, *run)) run {
	r := run{traces: testfixtures.Traces(t, fixture), logs: testfixtures.Logs(t, fixture)}
	testfixtures.WithTraceID(r.traces, r.logs, n)
	forEachTestSpan(r.traces, func(sp ptrace.Span) {
		r.tid, r.id = sp.TraceID(), sp.TraceID().String()
		if edit != nil {
			edit(sp, &r)
		}
	})
	return r
}

func forEachTestSpan(td ptrace.Traces, f func(ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				f(spans.At(k))
			}
		}
	}
}

func isRoot(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() }

// evaluationEvent appends a gen_ai.evaluation.result event with the given score to the run.
func evaluationEvent(r *run, score float64) {
	lr := r.logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
	lr.SetTraceID(r.tid)
	lr.SetEventName("gen_ai.evaluation.result")
	lr.Attributes().PutStr("gen_ai.evaluation.name", "relevance")
	lr.Attributes().PutDouble("gen_ai.evaluation.score.value", score)
}

// scenario is the recorded set: one run of each kind that a rule must select, one
// quarantined run a rule selects, a high score that must not count as low, and plain successes.
func scenario(t *testing.T, plain int) (runs []run, want map[string]string) {
	want = map[string]string{}
	add := func(r run, by string) {
		runs = append(runs, r)
		if by != "" {
			want[r.id] = by
		}
	}
	add(recordedRun(t, testfixtures.OTelEvents, 1, func(sp ptrace.Span, _ *run) {
		if isRoot(sp) {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	}), "error_root")
	add(recordedRun(t, testfixtures.OTelEvents, 2, func(sp ptrace.Span, _ *run) {
		if v, _ := sp.Attributes().Get("gen_ai.operation.name"); v.Str() == "execute_tool" {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	}), "failed_tool")
	low := recordedRun(t, testfixtures.OTelEvents, 3, nil)
	evaluationEvent(&low, 0.2)
	add(low, "low_score")
	add(recordedRun(t, testfixtures.OTelEvents, 4, func(sp ptrace.Span, _ *run) {
		if isRoot(sp) {
			sp.Attributes().PutStr("app.user_feedback", "negative")
		}
	}), "negative_feedback")
	add(recordedRun(t, testfixtures.OTelNoContent, 5, func(sp ptrace.Span, _ *run) {
		if isRoot(sp) {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	}), "error_root")
	high := recordedRun(t, testfixtures.OTelEvents, 6, nil)
	evaluationEvent(&high, 0.9)
	add(high, "")
	for i := 0; i < plain; i++ {
		add(recordedRun(t, testfixtures.OTelEvents, 1000+i, nil), "")
	}
	return runs, want
}

func selecting(rate float64, unselected string) func(*Config) {
	return func(c *Config) {
		c.Select = &SelectConfig{Rules: selectRules, SampleRate: rate, Unselected: unselected}
	}
}

func sendAll(h *harness, runs []run) {
	for _, r := range runs {
		h.sendTraces(r.traces)
		h.sendLogs(r.logs)
	}
	h.shutdown()
}

func selectedBy(cases []*replaycase.Case) map[string]string {
	out := map[string]string{}
	for _, c := range cases {
		out[c.Provenance.TraceID] = c.SelectedBy
	}
	return out
}

func TestSelectRulesChooseExactlyTheRunsThatTeachSomething(t *testing.T) {
	const plain = 200
	runs, want := scenario(t, plain)
	h := newHarness(t, selecting(0.1, unselectedDrop))
	sendAll(h, runs)

	cases := h.cases()
	got := selectedBy(cases)
	require.Len(t, got, len(cases), "one case per run")
	sampled := 0
	for id, by := range got {
		if by == selectedBySample {
			sampled++
			_, ruled := want[id]
			assert.False(t, ruled, "a run a rule matches is recorded under the rule, not the sample")
			continue
		}
		assert.Equal(t, want[id], by, "trace %s", id)
	}
	for id, by := range want {
		assert.Equal(t, by, got[id], "trace %s must be selected by %s", id, by)
	}
	// 201 unruled runs at 10 %: a binomial count outside 5..40 has odds below 1e-5.
	assert.GreaterOrEqual(t, sampled, 5)
	assert.LessOrEqual(t, sampled, 40)

	for _, c := range cases {
		if c.Provenance.TraceID == runs[4].id {
			assert.Equal(t, replaycase.StatusQuarantined, c.Status, "selection does not override the evidence policy")
			assert.True(t, c.HasReason(replaycase.ReasonNoInputMessages))
		}
	}

	// Counts reconcile: every run is selected (by a rule or the sample) or counted as not
	// selected, and every selected run is a case.
	unselected := len(runs) - len(cases)
	bySelected := map[string]int64{}
	for _, by := range got {
		bySelected[by]++
	}
	var points []metricdata.DataPoint[int64]
	for by, n := range bySelected {
		points = append(points, metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(attribute.String("selected_by", by))})
	}
	metadatatest.AssertEqualProcessorReplayCaseSelectedRuns(t, h.tel, points, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorReplayCaseUnselectedRuns(t, h.tel, []metricdata.DataPoint[int64]{{
		Value:      int64(unselected),
		Attributes: attribute.NewSet(attribute.String("reason", notSelectedReason), attribute.String("action", "dropped")),
	}}, metricdatatest.IgnoreTimestamp())
	assert.Zero(t, h.logOut.LogRecordCount(), "the events of dropped runs are not passed on either")
}

// The sample depends on the trace id alone: two processors (two collectors, or a re-drive)
// keep the same runs.
func TestSampleIsTheSameOnEveryInstance(t *testing.T) {
	sampledIDs := func() []string {
		runs, _ := scenario(t, 300)
		h := newHarness(t, selecting(0.25, unselectedDrop))
		sendAll(h, runs)
		var ids []string
		for id, by := range selectedBy(h.cases()) {
			if by == selectedBySample {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		return ids
	}
	first, second := sampledIDs(), sampledIDs()
	assert.NotEmpty(t, first)
	assert.Equal(t, first, second)
}

func TestUnselectedRunsCanPassOnUnchanged(t *testing.T) {
	runs, want := scenario(t, 20)
	spans, events := 0, 0
	for _, r := range runs {
		if _, ok := want[r.id]; !ok {
			spans += r.traces.SpanCount()
			events += r.logs.LogRecordCount()
		}
	}
	h := newHarness(t, selecting(0, unselectedPass))
	sendAll(h, runs)

	assert.Len(t, h.cases(), len(want), "only the ruled runs become cases")
	var passed int
	for _, td := range h.sink.AllTraces() {
		rs := td.ResourceSpans()
		for i := 0; i < rs.Len(); i++ {
			for j := 0; j < rs.At(i).ScopeSpans().Len(); j++ {
				if rs.At(i).ScopeSpans().At(j).Scope().Name() != "github.com/reprise-dev/reprise/replay_case" {
					passed += rs.At(i).ScopeSpans().At(j).Spans().Len()
				}
			}
		}
	}
	assert.Equal(t, spans, passed, "every span of an unselected run is passed on")
	assert.Equal(t, events, h.logOut.LogRecordCount(), "and every event")
	metadatatest.AssertEqualProcessorReplayCaseUnselectedRuns(t, h.tel, []metricdata.DataPoint[int64]{{
		Value:      int64(len(runs) - len(want)),
		Attributes: attribute.NewSet(attribute.String("reason", notSelectedReason), attribute.String("action", "passed")),
	}}, metricdatatest.IgnoreTimestamp())
}

func TestWithoutSelectEveryRunIsACase(t *testing.T) {
	runs, _ := scenario(t, 3)
	h := newHarness(t, nil)
	sendAll(h, runs)
	cases := h.cases()
	require.Len(t, cases, len(runs))
	for _, c := range cases {
		assert.Empty(t, c.SelectedBy)
	}
}

func TestSampleRateOneKeepsEveryRun(t *testing.T) {
	s := &selector{}
	require.NoError(t, func() (err error) {
		s, err = newSelector(processortest.NewNopSettings(metadata.Type).TelemetrySettings, &SelectConfig{SampleRate: 1, Unselected: unselectedDrop}, 1)
		return err
	}())
	for i := 0; i < 1000; i++ {
		assert.True(t, s.sampled(pcommon.TraceID{byte(i), byte(i >> 8), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
	}
}

func TestSelectConfigErrorsNameTheField(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Select = &SelectConfig{SampleRate: 1.5, Unselected: "keep"}
	err := cfg.Validate()
	require.Error(t, err)
	assert.ErrorContains(t, err, "select.sample_rate must be between 0 and 1, got 1.5")
	assert.ErrorContains(t, err, `select.unselected must be "drop" or "pass", got "keep"`)

	cfg.Select = &SelectConfig{Unselected: unselectedDrop}
	assert.ErrorContains(t, cfg.Validate(), "would select no run")

	cfg.Select = &SelectConfig{Rules: map[string]string{"broken": `span.status.code ==`, "unknown_path": `log.nonsense == 1`}}
	assert.ErrorContains(t, cfg.Validate(), "select.rules.broken")
	assert.ErrorContains(t, cfg.Validate(), "select.rules.unknown_path")
	_, err = NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	assert.ErrorContains(t, err, "select.rules.broken")
}

// The selection is made once per closed trace, at close: spans that arrive later in the grace
// period still count.
func TestRuleSeesSpansThatArriveAfterTheRoot(t *testing.T) {
	r := recordedRun(t, testfixtures.OTelEvents, 7, nil)
	late := ptrace.NewTraces()
	var tool ptrace.Span
	forEachTestSpan(r.traces, func(sp ptrace.Span) {
		if v, _ := sp.Attributes().Get("gen_ai.operation.name"); v.Str() == "execute_tool" {
			tool = sp
		}
	})
	rs := late.ResourceSpans().AppendEmpty()
	r.traces.ResourceSpans().At(0).Resource().CopyTo(rs.Resource())
	failed := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	tool.CopyTo(failed)
	failed.SetSpanID(pcommon.SpanID{0xfa, 0x11})
	failed.Status().SetCode(ptrace.StatusCodeError)

	h := newHarness(t, selecting(0, unselectedDrop))
	h.sendTraces(r.traces)
	h.sendLogs(r.logs)
	h.advance(time.Second)
	h.sendTraces(late)
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, "failed_tool", cases[0].SelectedBy)
	h.shutdown()
}

// BenchmarkSelectRules measures the selection alone: the four rules of selectRules (three span
// rules, one log rule) and the sample, evaluated once per closed run over the benchmark corpus.
// None of the corpus runs matches a rule, so every rule visits every span and event: the worst
// case. The cost of the whole processor with and without selection is
// BenchmarkSpansThroughProcessor.
// Run: go test -run '^$' -bench SelectRules -benchmem -count 6 ./processor/replaycaseprocessor/
func BenchmarkSelectRules(b *testing.B) {
	traces, logs, spans := corpus.Runs(b, benchTraces)
	s, err := newSelector(processortest.NewNopSettings(metadata.Type).TelemetrySettings, &SelectConfig{Rules: selectRules, SampleRate: 0.01}, 1)
	require.NoError(b, err)
	ctx := context.Background()
	ids := make([]pcommon.TraceID, len(traces))
	for i, td := range traces {
		ids[i] = td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range traces {
			_, _ = s.decide(ctx, traces[j], logs[j], ids[j])
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*len(traces)), "ns/run")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*spans), "ns/span")
}

// guideRecipes are the replay_case configs of the guide's yaml blocks, in order.
func guideRecipes(t *testing.T) []*Config {
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "selection.md"))
	require.NoError(t, err)
	var recipes []*Config
	for _, chunk := range strings.Split(string(guide), "```yaml\n")[1:] {
		body, _, _ := strings.Cut(chunk, "```")
		var doc struct {
			Processors map[string]map[string]any `yaml:"processors"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(body), &doc), body)
		rc, ok := doc.Processors["replay_case"]
		if !ok {
			continue
		}
		cfg := createDefaultConfig().(*Config)
		require.NoError(t, confmap.NewFromStringMap(rc).Unmarshal(cfg), body)
		recipes = append(recipes, cfg)
	}
	return recipes
}

// Every select block of the guide must be a valid config: a recipe users copy must start.
func TestGuideRecipesAreValid(t *testing.T) {
	recipes := guideRecipes(t)
	for _, cfg := range recipes {
		require.NoError(t, cfg.Validate())
		require.NotNil(t, cfg.Select)
	}
	assert.Len(t, recipes, 4, "the guide's select examples")
}

// An OTTL comparison of values of different types is false, not an error: a rule written for a
// number or a bool misses a run whose instrumentation recorded the value as a string. The
// guide's recipes must select such runs too.
func TestGuideRecipesMatchValuesRecordedAsStrings(t *testing.T) {
	recipes := guideRecipes(t)
	lowScore := recordedRun(t, testfixtures.OTelEvents, 1, nil)
	evaluationEvent(&lowScore, 0.2)
	for r := range pdatawalk.LogRecords(lowScore.logs) {
		if v, ok := r.Record.Attributes().Get("gen_ai.evaluation.score.value"); ok {
			v.SetStr("0.2")
		}
	}
	flagged := recordedRun(t, testfixtures.OTelEvents, 2, func(sp ptrace.Span, _ *run) {
		if isRoot(sp) {
			sp.Attributes().PutStr("app.flagged", "true")
		}
	})
	for i, tc := range []struct {
		recipe int
		r      run
		by     string
	}{{1, lowScore, "low_score"}, {2, flagged, "flagged"}} { // recipes 1 and 2: failures and complaints, flagged conversations
		h := newHarness(t, func(c *Config) { c.Select = recipes[tc.recipe].Select })
		sendAll(h, []run{tc.r})
		cases := h.cases()
		require.Len(t, cases, 1, "case %d", i)
		assert.Equal(t, tc.by, cases[0].SelectedBy)
	}
}

// SDKs before the LogRecord EventName field name an event in the event.name attribute (the
// recorded otel-events run does), and the processor joins such an event as a GenAI event; but
// OTTL's log.event_name reads only the field, so a recipe that tested it alone never matched
// such an evaluator's verdict, and the run was dropped.
func TestGuideRecipesMatchEventsNamedByAttribute(t *testing.T) {
	recipes := guideRecipes(t)
	for i, tc := range []struct {
		recipe int
		by     string
	}{{1, "low_score"}, {2, "moderation"}} { // recipes 1 and 2: failures and complaints, flagged conversations
		r := recordedRun(t, testfixtures.OTelEvents, 10+i, nil)
		lr := r.logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
		lr.SetTraceID(r.tid)
		lr.Attributes().PutStr("event.name", "gen_ai.evaluation.result")
		lr.Attributes().PutStr("gen_ai.evaluation.name", "policy")
		lr.Attributes().PutDouble("gen_ai.evaluation.score.value", 0.2)
		lr.Attributes().PutStr("gen_ai.evaluation.score.label", "fail")
		h := newHarness(t, func(c *Config) { c.Select = recipes[tc.recipe].Select })
		sendAll(h, []run{r})
		cases := h.cases()
		require.Len(t, cases, 1, "recipe %d", tc.recipe)
		assert.Equal(t, tc.by, cases[0].SelectedBy)
	}
}

// The recorded OpenInference run names its model calls openinference.span.kind LLM, without
// gen_ai.operation.name: the first recipe ("all failures") must still keep one that failed.
func TestGuideRecipeKeepsAFailedOpenInferenceModelCall(t *testing.T) {
	r := recordedRun(t, testfixtures.OpenInference, 12, func(sp ptrace.Span, _ *run) {
		if v, _ := sp.Attributes().Get("openinference.span.kind"); v.Str() == "LLM" {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	})
	h := newHarness(t, func(c *Config) { c.Select = guideRecipes(t)[1].Select })
	sendAll(h, []run{r})
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, "failed_model_call", cases[0].SelectedBy)
}

// A fragment (spans that arrived after the run's case closed) holds no root: an error_root rule
// cannot match it, yet it belongs to a selected run and is kept under the run's reason.
func TestLateFragmentOfASelectedRunIsKept(t *testing.T) {
	r := recordedRun(t, testfixtures.OTelEvents, 8, func(sp ptrace.Span, _ *run) {
		if isRoot(sp) {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	})
	late := ptrace.NewTraces()
	forEachTestSpan(r.traces, func(sp ptrace.Span) {
		if !isRoot(sp) && late.SpanCount() == 0 {
			cp := late.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.CopyTo(cp)
			cp.SetSpanID(pcommon.SpanID{0x1a, 0x7e})
		}
	})
	plainRun := recordedRun(t, testfixtures.OTelEvents, 9, nil)
	plainLate := ptrace.NewTraces()
	late.CopyTo(plainLate)
	forEachTestSpan(plainLate, func(sp ptrace.Span) { sp.SetTraceID(plainRun.tid) })

	h := newHarness(t, selecting(0, unselectedDrop))
	h.sendTraces(r.traces)
	h.sendLogs(r.logs)
	h.sendTraces(plainRun.traces)
	h.sendLogs(plainRun.logs)
	h.advance(3 * time.Second)
	h.sendTraces(late)
	h.sendTraces(plainLate)
	h.shutdown()

	cases := h.cases()
	require.Len(t, cases, 2, "the selected run and its fragment; the plain run and its fragment are not selected")
	for _, c := range cases {
		assert.Equal(t, r.id, c.Provenance.TraceID)
		assert.Equal(t, "error_root", c.SelectedBy)
	}
	assert.True(t, cases[1].HasReason(replaycase.ReasonLateSpans))
}

// A rule whose condition fails to evaluate cannot say whether the run matters, so the run is
// kept (selected_by "error:<rule>") rather than dropped, counted by rule, and logged with its
// trace id at most once a minute per rule with the number of errors since the last line.
func TestRuleThatFailsToEvaluateKeepsTheRun(t *testing.T) {
	payload := func(v string) func(ptrace.Span, *run) {
		return func(sp ptrace.Span, _ *run) {
			if isRoot(sp) {
				sp.Attributes().PutStr("app.payload", v)
			}
		}
	}
	rules := map[string]string{
		// ParseJSON fails on a payload that is not JSON: an evaluation error, not "false".
		"flagged":    `IsString(span.attributes["app.payload"]) and ParseJSON(span.attributes["app.payload"])["flag"] == true`,
		"root_error": selectRules["error_root"], // after "flagged" in name order
	}
	h := newHarness(t, func(c *Config) { c.Select = &SelectConfig{Rules: rules, Unselected: unselectedDrop} })
	logs := h.observeDropLog()

	broken := []run{recordedRun(t, testfixtures.OTelEvents, 1, payload("not json")), recordedRun(t, testfixtures.OTelEvents, 2, payload("{oops"))}
	matched := recordedRun(t, testfixtures.OTelEvents, 3, payload(`{"flag": true}`))
	plain := recordedRun(t, testfixtures.OTelEvents, 4, payload(`{"flag": false}`))
	// An earlier rule that errors does not hide a later one that matches.
	erroredButRuled := recordedRun(t, testfixtures.OTelEvents, 5, func(sp ptrace.Span, r *run) {
		payload("nope")(sp, r)
		if isRoot(sp) {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	})
	for _, r := range append(broken, matched, plain, erroredButRuled) {
		h.sendTraces(r.traces)
		h.sendLogs(r.logs)
	}
	h.advance(3 * time.Second)
	later := recordedRun(t, testfixtures.OTelEvents, 6, payload("still not json"))
	h.advance(time.Minute)
	h.sendTraces(later.traces)
	h.sendLogs(later.logs)
	h.shutdown()

	got := selectedBy(h.cases())
	assert.Equal(t, map[string]string{
		broken[0].id: "error:flagged", broken[1].id: "error:flagged", later.id: "error:flagged",
		matched.id: "flagged", erroredButRuled.id: "root_error",
	}, got, "the plain run alone is not selected")
	metadatatest.AssertEqualProcessorReplayCaseSelectionErrors(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 4, Attributes: attribute.NewSet(attribute.String("rule", "flagged"))},
	}, metricdatatest.IgnoreTimestamp())

	lines := logs.FilterMessage("select rule failed to evaluate; the run is kept as a case").All()
	require.Len(t, lines, 2, "one line per rule per minute")
	first, second := lines[0].ContextMap(), lines[1].ContextMap()
	assert.Equal(t, "flagged", first["rule"])
	assert.Equal(t, broken[0].id, first["trace_id"])
	assert.Contains(t, first["error"], "json")
	assert.Equal(t, later.id, second["trace_id"])
	assert.EqualValues(t, 2, second["errors_since_last_line"], "the two runs whose lines were held back")
}
