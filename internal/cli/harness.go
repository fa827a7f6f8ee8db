package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/otelcol"

	"go.opentelemetry.io/collector/component"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/replaycase"
)

var harnessBuildInfo = component.BuildInfo{Command: "reprise ci", Description: "Reprise replay harness", Version: "0.1.0"}

// Factories gives `reprise ci` the collector's components; cmd/reprise sets it to the
// ocb-generated component list, so the harness runs exactly what the collector runs.
var Factories func() (otelcol.Factories, error)

// harnessConfig is the collector `reprise ci` runs in process for one case: the replay
// extension serving the recorded dataset, and an OTLP receiver whose telemetry becomes a case
// through the same processor and exporter a production collector uses. Everything listens on
// loopback only.
const harnessConfig = `
extensions:
  replay:
    endpoint: 127.0.0.1:%[1]d
    directory: %[2]q
    mode: %[3]s%[9]s
    scrub:
      key: ${env:%[7]s}
    sessions:
      default_id: %[10]q   # the run's session, for requests that name none (REPRISE_REPLAY_SESSION)
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[4]d
processors:
  replay_case:
    # Cases close when the harness shuts down, after COMMAND has exited and flushed its
    # telemetry: a grace period would race the agent's log events under load.
    root_grace_period: 1h
    idle_timeout: 1h
    max_age: 2h
    raw_spans: none
    metadata:
      derived_from: resource.attributes["reprise.derived_from"]
    scrub:
      key: ${env:%[7]s}
exporters:
  replay_parquet:
    directory: %[5]q
    sending_queue:
      enabled: false
  nop:
%[6]s
service:
  telemetry:
    logs:
      level: error
    metrics:
      level: none
  extensions: [replay]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [%[8]s]
    logs:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [nop]
`

const recordExporter = `  replay_parquet/record:
    directory: %q
    sending_queue:
      enabled: false`

// hybridUpstream is the replay extension's upstream in hybrid mode.
const hybridUpstream = `
    upstream:
      openai:
        endpoint: %q`

// resourceAttributes adds the link to the recorded case to the command's
// OTEL_RESOURCE_ATTRIBUTES: the OpenTelemetry SDKs put it on the run's resource, and the
// harness's processor reads it into the new case's metadata derived_from.
func resourceAttributes(caseID string) string {
	link := "reprise.derived_from=" + url.QueryEscape(caseID)
	if v := os.Getenv("OTEL_RESOURCE_ATTRIBUTES"); v != "" {
		return v + "," + link
	}
	return link
}

// commandWaitDelay is how long a run waits for COMMAND's output once COMMAND has exited or
// been killed at --timeout.
const commandWaitDelay = 5 * time.Second

// replayCase runs COMMAND once against a replay of c and judges the run it emits.
func replayCase(ctx context.Context, o *ciOptions, policy Policy, c *replaycase.Case) (r caseResult) {
	start := time.Now()
	r = caseResult{CaseID: c.CaseID, AgentName: c.AgentName, Failing: []casediff.Finding{}}
	defer func() { r.DurationMS = time.Since(start).Milliseconds() }()
	fail := func(err error) caseResult {
		r.Outcome, r.Message = outcomeError, err.Error()
		return r
	}
	work, err := os.MkdirTemp("", "reprise-ci-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(work)
	newRuns := filepath.Join(work, "runs")
	exporters, extra := "replay_parquet", ""
	if o.record != "" {
		exporters, extra = "replay_parquet, replay_parquet/record", fmt.Sprintf(recordExporter, o.record)
	}
	dataset, err := filepath.Abs(o.dataset)
	if err != nil {
		return fail(err)
	}
	upstream := ""
	if o.mode == "hybrid" {
		upstream = fmt.Sprintf(hybridUpstream, o.upstream)
	}
	// One replay session per run: an agent that sends it as X-Replay-Session keeps its cursors
	// (and, in hybrid mode, stays live after its first miss) even when its HTTP calls carry no
	// traceparent; the server puts requests that name no session in it too (default_id), so
	// that a call an agent repeats is refused as a repeat, not answered again from the start.
	session := c.CaseID + "-" + strconv.FormatInt(start.UnixNano(), 36)
	var replayServer component.Component // the harness's replay extension, whose refusals judge the run
	stopCollector, replayPort, otlpPort, err := startHarnessOnFreePorts(ctx, filepath.Join(work, "collector.yaml"), watchingReplay(&replayServer), func(replayPort, otlpPort int) string {
		return fmt.Sprintf(harnessConfig, replayPort, dataset, o.mode, otlpPort, newRuns, extra, o.scrubKeyEnv, exporters, upstream, session)
	})
	if err != nil {
		return fail(fmt.Errorf("starting the replay harness: %w", err))
	}
	caseFile := filepath.Join(work, "case.json")
	if err := writeCaseFile(caseFile, c); err != nil {
		stopCollector()
		return fail(err)
	}

	base := fmt.Sprintf("http://127.0.0.1:%d/v1/cases/%s", replayPort, c.CaseID)
	cmdCtx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := exec.CommandContext(cmdCtx, o.command[0], o.command[1:]...)
	cmd.Env = append(os.Environ(),
		"OPENAI_BASE_URL="+base+"/openai/v1",
		"ANTHROPIC_BASE_URL="+base+"/anthropic",
		"REPRISE_REPLAY_URL="+base,
		fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", otlpPort),
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_RESOURCE_ATTRIBUTES="+resourceAttributes(c.CaseID),
		"REPRISE_CASE_ID="+c.CaseID,
		"REPRISE_REPLAY_SESSION="+session,
		"REPRISE_CASE_FILE="+caseFile,
	)
	cmd.Env = append(cmd.Env, placeholderAPIKeys()...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Killing COMMAND on --timeout does not kill its children (the agent a shell started),
	// which keep the output pipes open: without a bound, Run waits for them and --timeout
	// bounds nothing. After WaitDelay the pipes are closed and Run returns.
	cmd.WaitDelay = commandWaitDelay
	inOwnGroup(cmd)
	runErr := cmd.Run()
	_ = endGroup(cmd) // what the command left running ends with its run
	stopCollector()   // flushes the open run into the exporter
	r.Stdout, r.Stderr = tail(stdout.String()), tail(stderr.String())
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
	case ctx.Err() != nil:
		return fail(errInterrupted)
	case cmdCtx.Err() != nil:
		r.ExitCode = -1
		r.Outcome, r.Message = outcomeFailed, fmt.Sprintf("the command did not finish within %s", o.timeout)
		return r
	case errors.As(runErr, &exitErr):
		r.ExitCode = exitErr.ExitCode()
	case errors.Is(runErr, exec.ErrWaitDelay):
		return fail(fmt.Errorf("%s exited, but a process it started still held its output open %s later", o.command[0], commandWaitDelay))
	default:
		return fail(fmt.Errorf("running %s: %w", o.command[0], runErr))
	}
	runs, err := readDataset(newRuns)
	if err != nil && !errors.Is(err, os.ErrNotExist) { // no file: the command emitted nothing
		return fail(err)
	}
	// Read once the collector has stopped: every request of the run has been answered.
	misses, err := replayMisses(replayServer)
	if err != nil {
		return fail(err)
	}
	picked := pickRun(runs)
	judge(&r, c, picked, policy, misses)
	for _, run := range runs {
		if run != picked {
			r.OtherRuns = append(r.OtherRuns, run.CaseID)
		}
	}
	if len(r.OtherRuns) > 0 {
		// Only one run is compared: say so, or a second run (a regression in a retry, a
		// sub-agent traced as its own trace) would pass unseen.
		note := fmt.Sprintf("compared run %s; the command also emitted %d other runs, not compared (other_runs)", picked.CaseID, len(r.OtherRuns))
		r.Message = strings.TrimPrefix(r.Message+"; "+note, "; ")
	}
	return r
}

// pickRun is the agent run a command emitted: the accepted one if there is one, else the
// first. (An agent emits one run per invocation; a harness that also traces its own startup
// may emit more.)
func pickRun(runs []*replaycase.Case) *replaycase.Case {
	for _, c := range runs {
		if c.Status == replaycase.StatusAccepted {
			return c
		}
	}
	if len(runs) > 0 {
		return runs[0]
	}
	return nil
}

// harnessStartAttempts is how many times a harness is started on fresh ports when one of its
// ports was taken before its collector bound it.
const harnessStartAttempts = 5

// startHarnessOnFreePorts starts the harness collector with factories' components and the
// config cfg gives for a replay and an OTLP port, picking fresh ports again when one was taken
// before the collector bound it. stop stops the collector and gives its ports back.
func startHarnessOnFreePorts(ctx context.Context, path string, factories func() (otelcol.Factories, error), cfg func(replayPort, otlpPort int) string) (stop func(), replayPort, otlpPort int, err error) {
	for attempt := 1; ; attempt++ {
		ports, err := harnessPorts.take(2)
		if err != nil {
			return nil, 0, 0, err
		}
		stopCollector, err := startHarness(ctx, path, factories, cfg(ports[0], ports[1]))
		if err == nil {
			return func() {
				stopCollector()
				harnessPorts.release(ports)
			}, ports[0], ports[1], nil
		}
		harnessPorts.release(ports)
		if !errors.Is(err, errPortTaken) || attempt == harnessStartAttempts {
			return nil, 0, 0, err
		}
	}
}

// startHarness runs the collector with factories' components and cfg in this process until the
// returned stop is called.
// It returns once the collector runs: every component has started, so both servers listen on
// their ports. (Dialling the ports instead could reach another worker's server on a port this
// collector failed to bind.) A port in use fails with errPortTaken.
func startHarness(ctx context.Context, path string, factories func() (otelcol.Factories, error), cfg string) (stop func(), err error) {
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: harnessBuildInfo,
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"file:" + path},
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		}},
		SkipSettingGRPCLogger:   true,
		DisableGracefulShutdown: true,
	})
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- col.Run(ctx) }()
	deadline := time.After(20 * time.Second)
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-done:
			if isAddrInUse(err) {
				return nil, fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return nil, fmt.Errorf("the collector stopped: %w", err)
		case <-deadline:
			col.Shutdown()
			<-done
			return nil, errors.New("the collector was not running after 20 s")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return func() {
		col.Shutdown()
		<-done
	}, nil
}

// caseInput is REPRISE_CASE_FILE: what the command needs to re-run the recorded case.
type caseInput struct {
	CaseID        string               `json:"case_id"`
	AgentName     string               `json:"agent_name,omitempty"`
	InputMessages []replaycase.Message `json:"input_messages"`
	// Question is the text of the last user message, for agents that take one prompt.
	Question   string            `json:"question"`
	Metadata   map[string]string `json:"metadata"`
	Assertions map[string]string `json:"assertions"`
}

func writeCaseFile(path string, c *replaycase.Case) error {
	in := caseInput{CaseID: c.CaseID, AgentName: c.AgentName, InputMessages: c.InputMessages, Metadata: c.Metadata, Assertions: c.Assertions}
	for _, m := range c.InputMessages {
		if m.Role == "user" {
			in.Question = strings.TrimSpace(messageText(m))
		}
	}
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// placeholderAPIKeys gives the OpenAI and Anthropic SDKs a key where the environment has none:
// they refuse to start without one, and a CI job replaying a dataset has none to give. Replay
// never checks it; a key of the user's own is left as it is (hybrid mode forwards it upstream).
func placeholderAPIKeys() []string {
	var env []string
	for _, key := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		if os.Getenv(key) == "" {
			env = append(env, key+"=reprise-replay-not-a-key")
		}
	}
	return env
}
