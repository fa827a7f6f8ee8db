package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/replayext"
)

// replayMiss is the finding of a request the harness's replay server refused: a model call,
// tool call, retrieval or embedding call the recording does not have. The run's own diff may
// not show it: an agent that catches the 404 and carries on (a retry without the change, a
// canned answer) can emit a run just like the recording.
const replayMiss casediff.FindingType = "replay_miss"

// pointReplay is the decision point of replay misses: they come from the replay server, not
// from the diff of the two runs, and are listed after the diff's own points.
const pointReplay casediff.DecisionPoint = "replay"

// watchingReplay is the harness's components with the replay extension's factory wrapped so
// that the extension it creates is kept in *server: after the run, the harness reads its
// refusals. A refusal is counted whatever the request's session, so that an agent that sends
// neither X-Replay-Session nor traceparent (each request its own session) is judged too.
func watchingReplay(server *component.Component) func() (otelcol.Factories, error) {
	return func() (otelcol.Factories, error) {
		f, err := Factories()
		if err != nil {
			return f, err
		}
		replay := replayext.NewFactory().Type()
		orig, ok := f.Extensions[replay]
		if !ok {
			return f, fmt.Errorf("the collector components have no %s extension", replay)
		}
		f.Extensions = maps.Clone(f.Extensions) // the caller's map stays as it was
		f.Extensions[replay] = extension.NewFactory(replay, orig.CreateDefaultConfig,
			func(ctx context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
				ext, err := orig.Create(ctx, set, cfg)
				if err == nil {
					*server = ext
				}
				return ext, err
			}, orig.Stability())
		return f, nil
	}
}

// replayMisses are the requests the harness's replay server refused during the run, as
// replay_miss findings: where each left the recording (paths and finding types, never values).
func replayMisses(server component.Component) ([]casediff.Finding, error) {
	refused, total, ok := replayext.Refusals(server)
	if !ok {
		return nil, errors.New("the replay server's refused requests could not be read: the harness's replay extension is not Reprise's")
	}
	out := make([]casediff.Finding, 0, len(refused)+1)
	for _, d := range refused {
		out = append(out, casediff.Finding{Type: replayMiss, DecisionPoint: pointReplay, Detail: missDetail(d)})
	}
	if more := total - len(refused); more > 0 {
		out = append(out, casediff.Finding{Type: replayMiss, DecisionPoint: pointReplay,
			Detail: fmt.Sprintf("%d more requests refused, not listed", more)})
	}
	return out, nil
}

// missNames name a refused request by the replay endpoint it was sent to.
var missNames = map[string]string{"chat": "model call", "tool": "tool call", "retrieval": "retrieval", "embeddings": "embedding call"}

// missDetail says which request was refused and where it differs from the recording, the
// finding types and paths first: a Markdown report cuts a long detail short.
func missDetail(d replayext.Divergence) string {
	what := missNames[d.Endpoint]
	if what == "" {
		what = d.Endpoint + " request"
	}
	var types []string
	for _, f := range d.Findings {
		if !slices.Contains(types, string(f.Type)) {
			types = append(types, string(f.Type))
		}
	}
	s := what + " refused"
	if len(types) > 0 {
		s += " (" + strings.Join(types, ", ") + ")"
	}
	if len(d.Paths) > 0 {
		s += " at " + strings.Join(d.Paths, ", ") + ": differs from the next recorded one"
	} else {
		s += ": made more often than recorded, or after the last recorded one"
	}
	if d.CaseID != "" {
		s += " of case " + d.CaseID
	}
	return s
}
