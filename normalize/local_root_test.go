package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// callerSpan is the span of the traced caller (a gateway, another service): never in the trace.
var callerSpan = pcommon.SpanID{0xca, 0x11, 0xe2, 0, 0, 0, 0, 1}

// behindCaller builds the case of a fixture run served behind a traced caller: its root span
// gets callerSpan as parent, its flags' remote bits (0x100, 0x200) set to remoteBits, and
// change (if any) runs on every span after that. It returns the case, its findings and the id
// the case has when anchored on its smallest span id (docs/case-model.md, case_id).
func behindCaller(t *testing.T, run string, remoteBits uint32, change func(sp ptrace.Span)) (*replaycase.Case, []replaycase.Reason, string) {
	t.Helper()
	td := testfixtures.Traces(t, run)
	roots, minSpanID := 0, ""
	for s := range pdatawalk.Spans(td) {
		sp := s.Span
		if sp.ParentSpanID().IsEmpty() {
			sp.SetParentSpanID(callerSpan)
			sp.SetFlags(sp.Flags()&^(pdatawalk.SpanFlagsHasIsRemote|pdatawalk.SpanFlagsIsRemote) | remoteBits)
			roots++
		}
		if change != nil {
			change(sp)
		}
		if id := sp.SpanID().String(); minSpanID == "" || id < minSpanID {
			minSpanID = id
		}
	}
	require.Equal(t, 1, roots, "%s has one root span", run)
	c, findings, genAI := Build(td, testfixtures.Logs(t, run))
	require.True(t, genAI)
	return c, findings, replaycase.ID(c.Provenance.TraceID, minSpanID)
}

func codes(findings []replaycase.Reason) []string {
	var out []string
	for _, f := range findings {
		out = append(out, f.Code)
	}
	return out
}

// An agent served behind a traced caller (its HTTP handler received a traceparent): its top
// span's parent is the caller's span, flagged remote by the SDK. That span is the run's root:
// the case is the one the same run without caller gives (root step, agent, times, service,
// findings), except its case_id, which stays the one a run without root had (smallest span id),
// so that a case rebuilt across the upgrade keeps its id. It was quarantined no_root_span.
func TestLocalRootIsTheCaseRoot(t *testing.T) {
	for _, run := range []string{testfixtures.Traceloop, testfixtures.OTelEvents} {
		t.Run(run, func(t *testing.T) {
			plain, plainFindings := build(t, run)
			c, findings, minAnchored := behindCaller(t, run, pdatawalk.SpanFlagsHasIsRemote|pdatawalk.SpanFlagsIsRemote, nil)
			assert.NotContains(t, codes(findings), replaycase.ReasonNoRootSpan)
			assert.Equal(t, plainFindings, findings)
			assert.Equal(t, minAnchored, c.CaseID, "a local root keeps the case id of a run without root")
			assert.NotEqual(t, plain.CaseID, c.CaseID, "the fixture's root is not its smallest span id, so the anchors differ")
			require.NotEmpty(t, plain.Provenance.RootSpanID)
			assert.Equal(t, plain.Provenance.RootSpanID, c.Provenance.RootSpanID)
			assert.Equal(t, "weather-bot", c.AgentName)
			assert.Equal(t, plain.StartTime, c.StartTime)
			assert.Equal(t, plain.EndTime, c.EndTime)
			got := *c
			got.CaseID = plain.CaseID
			assert.Equal(t, *plain, got, "apart from its case_id, the case is the one of the run without caller")
		})
	}
}

// Without both remote bits the parent is not known to be remote: a local parent that was lost
// (0x100 alone: the SDK says the parent is local) or an SDK that does not say (no bit: older
// SDKs). Nothing changes: no root, no_root_span, the case anchored on its smallest span id.
func TestMissingParentNotKnownRemoteIsNoRoot(t *testing.T) {
	for name, bits := range map[string]uint32{"parent local": pdatawalk.SpanFlagsHasIsRemote, "no flags": 0, "remote bit without has-bit": pdatawalk.SpanFlagsIsRemote} {
		for _, run := range []string{testfixtures.Traceloop, testfixtures.OTelEvents} {
			t.Run(name+"/"+run, func(t *testing.T) {
				c, findings, minAnchored := behindCaller(t, run, bits, nil)
				assert.Contains(t, codes(findings), replaycase.ReasonNoRootSpan)
				assert.Empty(t, c.Provenance.RootSpanID)
				assert.Equal(t, minAnchored, c.CaseID)
				assert.Len(t, c.Steps, 5, "the agent span is a step: there is no root step")
			})
		}
	}
}

// A span flagged remote whose parent is in the trace is no root (the flag is wrong, or the
// parent was sent from another process into the same trace): the run stays without root.
func TestRemoteParentInTheTraceIsNoRoot(t *testing.T) {
	var chat pcommon.SpanID
	c, findings, _ := behindCaller(t, testfixtures.Traceloop, 0, func(sp ptrace.Span) {
		if sp.Name() == "chat gpt-4o-mini" && chat.IsEmpty() {
			chat = sp.SpanID()
			sp.SetFlags(sp.Flags() | pdatawalk.SpanFlagsHasIsRemote | pdatawalk.SpanFlagsIsRemote)
		}
	})
	require.False(t, chat.IsEmpty())
	assert.Contains(t, codes(findings), replaycase.ReasonNoRootSpan)
	assert.Empty(t, c.Provenance.RootSpanID)
}

// A trace that holds a parentless span keeps it as root, whatever other spans have remote
// parents; of several local roots, the agent span is the root.
func TestLocalRootsOnlyWithoutParentlessSpan(t *testing.T) {
	plain, _ := build(t, testfixtures.Traceloop)
	remoteChild := func(sp ptrace.Span) {
		if sp.Name() == "execute_tool get_weather" {
			sp.SetParentSpanID(pcommon.SpanID{0xca, 0x11, 0xe2, 0, 0, 0, 0, 2})
			sp.SetFlags(sp.Flags() | pdatawalk.SpanFlagsHasIsRemote | pdatawalk.SpanFlagsIsRemote)
		}
	}
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	for s := range pdatawalk.Spans(td) {
		remoteChild(s.Span)
	}
	c, findings, _ := Build(td, testfixtures.Logs(t, testfixtures.Traceloop))
	assert.NotContains(t, codes(findings), replaycase.ReasonNoRootSpan)
	assert.Equal(t, plain.CaseID, c.CaseID, "a parentless root anchors the case id, as before")
	assert.Equal(t, plain.Provenance.RootSpanID, c.Provenance.RootSpanID)

	// The tool span starts after the agent span; the agent span is chosen for being an agent.
	c, findings, minAnchored := behindCaller(t, testfixtures.Traceloop, pdatawalk.SpanFlagsHasIsRemote|pdatawalk.SpanFlagsIsRemote, remoteChild)
	assert.NotContains(t, codes(findings), replaycase.ReasonNoRootSpan)
	assert.Equal(t, plain.Provenance.RootSpanID, c.Provenance.RootSpanID)
	assert.Equal(t, minAnchored, c.CaseID)
}
