package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testcollector"
)

// The walk a new user takes through README.md's quick start, then docs/cases.md, docs/diff.md
// and docs/cost.md: the command lines are read from the Markdown, run by bash as a user pastes
// them (in a directory holding ./testdata, ./reprise-data and ./reprise), and their output is
// checked against what the docs say it is. Only what cannot run here is changed: the fixed
// ports become free ones, `reprise` is the binary under test, and a command running the
// user's own agent (`-- node …`) or building the binary is skipped.
func TestDocsWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the documented commands need %s", tool)
	}
	root := testcollector.RepoRoot()
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")))
	require.NoError(t, os.Symlink(binary, filepath.Join(dir, "reprise")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.Symlink(binary, filepath.Join(dir, "bin", "reprise")))

	// config/local.yaml, as `go run ./cmd/reprise --config config/local.yaml` runs it, with free
	// ports, the dataset under dir, and file_max_age 0s (the README's own --set for ~3 s).
	local, err := os.ReadFile(filepath.Join(root, "config", "local.yaml"))
	require.NoError(t, err)
	otlpPort, replayPort := testcollector.FreePort(t), testcollector.FreePort(t)
	ports := strings.NewReplacer(
		"127.0.0.1:4317", fmt.Sprintf("127.0.0.1:%d", testcollector.FreePort(t)),
		"127.0.0.1:4318", fmt.Sprintf("127.0.0.1:%d", otlpPort),
		"127.0.0.1:8790", fmt.Sprintf("127.0.0.1:%d", replayPort))
	cfg := strings.NewReplacer(
		"./reprise-data", filepath.Join(dir, "reprise-data"),
		"file_max_age: 10s", "file_max_age: 0s",
		"\nservice:\n", "\nservice:\n  telemetry:\n    metrics:\n      level: none\n",
	).Replace(ports.Replace(string(local)))
	require.Contains(t, cfg, "file_max_age: 0s")
	readme := readDoc(t, "README.md")
	require.Contains(t, readme, "go run ./cmd/reprise --config config/local.yaml")
	require.Contains(t, readme, "--set exporters::replay_parquet::file_max_age=0s")
	// No REPRISE_SCRUB_KEY, as in the README: the key is generated in the config directory,
	// here one under dir.
	t.Setenv("REPRISE_SCRUB_KEY", "") // restored after the test
	require.NoError(t, os.Unsetenv("REPRISE_SCRUB_KEY"))
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}
	c := testcollector.Launch(t, binary, cfg, env, otlpPort)

	// Quick start 1: "Everything is ready", with no warning (the key's variable has an empty
	// default in config/local.yaml, so an unset one is not reported), and the key file the README
	// names is generated.
	c.Output.WaitUntilSignalsAreHandled(t)
	require.Contains(t, flat(readme), "Without `REPRISE_SCRUB_KEY` the scrub key is generated once in `~/.config/reprise/scrub.key`")
	startup, _, _ := strings.Cut(c.Output.String(), "Everything is ready")
	assert.Empty(t, regexp.MustCompile(`(?m)^.*\twarn\t.*$`).FindAllString(startup, -1), startup)
	assert.FileExists(t, filepath.Join(dir, "config", "reprise", "scrub.key"))
	run := func(block []string) []result { return runLines(t, dir, env, block, ports) }

	// Quick start 2: the three OTLP posts.
	for _, r := range run(blockWith(t, readme, "sh", "--data @testdata/otlp/otel-events/logs.json")) {
		assert.Equal(t, 0, r.rc, r.String())
		assert.Equal(t, `{"partialSuccess":{}}`, r.out, r.String())
	}

	// Quick start 3: the three datasets' files, named as listed.
	listing := lines(blockWith(t, readme, "", "reprise-data/cases/dt="))
	require.Len(t, listing, 3)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		missing := ""
		for _, l := range listing {
			// part-01a2….zstd.parquet: the hex digits shown are the UUIDv7's time, which moves on.
			pattern := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(regexp.MustCompile(`[0-9a-f]*…`).ReplaceAllString(l, "\x00")), "\x00", `[0-9a-f-]+`) + "$")
			if !anyFile(t, dir, pattern) {
				missing = l
			}
		}
		if missing == "" {
			break
		}
		require.True(t, time.Now().Before(deadline), "no file like %s:\n%s", missing, c.Output)
	}

	// Quick start 5: the case id, and the recorded answer of its first model call. The extension
	// reads the dataset again every second, so the listing may be empty at first.
	replay := append(blockWith(t, readme, "sh", "/openai/v1/chat/completions"), `echo "$CASE_ID"`)
	var out []result
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out = run(replay)
		if strings.Contains(out[0].out, `"case_id"`) || time.Now().After(deadline) {
			break
		}
	}
	require.Len(t, out, 4)
	caseID := out[3].out
	m := regexp.MustCompile("`CASE_ID` is `([0-9a-f]{32})`").FindStringSubmatch(readme)
	require.NotNil(t, m, "the README names the quick start's case id")
	require.Equal(t, m[1], caseID, "CASE_ID as the README's command sets it: %s", out[1])
	assert.Contains(t, out[0].out, `"case_id":"`+caseID+`"`, out[0].String())
	assert.Contains(t, out[2].out, `"object":"chat.completion"`, out[2].String())
	assert.Contains(t, out[2].out, `"id":"call_1_0"`, out[2].String())
	assert.Contains(t, out[2].out, `"arguments":"{\"city\":\"Paris\",\"unit\":\"celsius\"}"`, out[2].String())
	require.Contains(t, readme, "`call_1_0`")
	require.Contains(t, readme, "`{\"city\":\"Paris\",\"unit\":\"celsius\"}`")

	// Quick start 6: ls and show (CASE_ID as step 5 set it).
	caseEnv := append(env, "CASE_ID="+caseID)
	tools := runLines(t, dir, caseEnv, runnable(blockWith(t, readme, "sh", "./reprise ls")), ports)
	require.Len(t, tools, 2)
	assert.Regexp(t, `(?m)^CASE_ID +STARTED +STATUS +AGENT +STEPS +TOKENS +REASONS +MUTATION_OF$`, tools[0].out, "the columns docs/diff.md lists")
	assert.Regexp(t, `(?m)^`+caseID+` .* accepted +weather-bot +4 +214 *$`, tools[0].out)
	assert.Regexp(t, `(?m)^98a05ed4[0-9a-f]{24} .* quarantined +weather-bot .* no_input_messages,no_model_output$`, tools[0].out)
	assert.Contains(t, tools[1].out, "case "+caseID+"  weather-bot  accepted", tools[1].String())

	// docs/cost.md: the cost line of `reprise show`.
	cost := readDoc(t, "docs/cost.md")
	m = regexp.MustCompile("tokens: `(cost: [^`]+)`").FindStringSubmatch(cost)
	require.NotNil(t, m)
	assert.Contains(t, tools[1].out, "  "+m[1]+"\n", tools[1].String())

	// docs/diff.md: ls of the quarantine, show, and the diff of the quick start's two runs.
	diffDoc := readDoc(t, "docs/diff.md")
	d := runLines(t, dir, env, runnable(blockWith(t, diffDoc, "sh", "./reprise diff ")), ports)
	require.Len(t, d, 3)
	assert.Equal(t, 0, d[0].rc, d[0].String())
	assert.NotContains(t, d[0].out, caseID)
	assert.Contains(t, d[0].out, " quarantined ", d[0].String())
	assert.Contains(t, d[1].out, "case "+caseID, d[1].String())
	assert.Equal(t, 1, d[2].rc, "a diff with findings exits 1: %s", d[2])
	assert.Equal(t, 4, strings.Count(d[2].out, "| `prompt_changed` |"), d[2].String())
	for _, section := range []string{"### model", "### answer", "| `answer_changed` |", "### latency", "| `latency_changed` |"} {
		assert.Contains(t, d[2].out, section, d[2].String())
	}
	require.Contains(t, flat(diffDoc), "exits 1 and shows, under `model`, the four prompt messages")

	// docs/cases.md: show, then three mutations whose new ids are in the comments.
	cases := readDoc(t, "docs/cases.md")
	mutate := blockWith(t, cases, "sh", "./reprise mutate a6a47648 --step 2 --tool-error")
	mu := run(mutate)
	require.Len(t, mu, 4)
	assert.Regexp(t, `#2 tool +execute_tool get_weather`, mu[0].out, "the step the comment names: %s", strings.Join(comments(mutate[:1]), ""))
	wantIDs := regexp.MustCompile(`[0-9a-f]{32}`).FindAllString(strings.Join(comments(mutate), "\n"), -1)
	require.Len(t, wantIDs, 3, "the new ids in the comments")
	for i, r := range mu[1:] {
		assert.Equal(t, 0, r.rc, r.String())
		assert.Equal(t, wantIDs[i], r.out, r.String())
	}
	assert.Contains(t, cases, "`{\"step\":2,\"edit\":\"tool_error\",\"value\":\"weather service down\"}`")
	// "POST /v1/cases/<new id>/tools/get_weather answers the edited result" after a refresh.
	require.Contains(t, flat(cases), "`POST /v1/cases/<new id>/tools/get_weather` answers the edited result")
	tool := []string{fmt.Sprintf(`curl -s -X POST http://127.0.0.1:8790/v1/cases/%s/tools/get_weather -H 'Content-Type: application/json' -d '{"city":"Paris","unit":"celsius"}'`, wantIDs[0])}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r := run(tool)[0]
		if strings.Contains(r.out, `"error":"weather service down"`) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the mutated tool step is not served: %s", r)
	}

	// docs/cases.md: the hybrid example's mutation into ./mutated (the `ci` line runs an agent).
	hybrid := runnable(blockWith(t, cases, "sh", "--out ./mutated)"))
	hybrid = append(hybrid, `./reprise ls --dataset ./mutated --case "$id"`)
	h := runLines(t, dir, env, hybrid, ports)
	require.Len(t, h, 2)
	assert.Regexp(t, `(?m)^[0-9a-f]{32} .* accepted +weather-bot`, h[1].out, h[1].String())

	// docs/cases.md: export, then import twice, as the comments say.
	export := blockWith(t, cases, "sh", "./reprise export ")
	ex := run(export)
	require.Len(t, ex, 3)
	assert.Equal(t, "exported 2 cases to bug-1234.parquet", ex[0].out, ex[0].String())
	for i, r := range ex[1:] {
		assert.Equal(t, 0, r.rc, r.String())
		assert.Regexp(t, "^"+strings.ReplaceAll(regexp.QuoteMeta(strings.TrimSpace(comments(export[i+1 : i+2])[0])), "…", ".*")+"$", r.out)
	}

	// docs/cost.md: `prices update` and `prices show`, output as in the comments. update takes
	// the built-in table (the doc's data.json) and a directory under dir for /etc/reprise/prices.
	update := blockWith(t, cost, "sh", "reprise prices update ")
	require.Len(t, lines(update), 1)
	prices := filepath.Join(dir, "prices")
	u := runLines(t, dir, env, []string{strings.NewReplacer("data.json", filepath.Join(root, "pricing", "data", "genai-prices-0.2.3.json"),
		"/etc/reprise/prices", prices).Replace(lines(update)[0])}, ports)
	assert.Equal(t, 0, u[0].rc, u[0].String())
	want := strings.ReplaceAll(strings.Join(outputComments(t, cost, "reprise prices update "), "\n"), "/etc/reprise/prices", prices)
	assert.Equal(t, want, u[0].out)
	show := blockWith(t, cost, "sh", "reprise prices show ")
	s := run(show[:1])
	assert.Equal(t, 0, s[0].rc, s[0].String())
	assert.Equal(t, strings.Join(outputComments(t, cost, "reprise prices show "), "\n"), s[0].out)
}

func readDoc(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join(testcollector.RepoRoot(), name))
	require.NoError(t, err)
	return string(b)
}

// flat is text with every run of white space one space, for phrases a reflow may break.
func flat(text string) string { return strings.Join(strings.Fields(text), " ") }

var fence = regexp.MustCompile("(?ms)^([ \t]*)```([a-z]*)[ \t]*\n(.*?)^[ \t]*```")

// blockWith is the fenced block of lang ("" for a block without one) that contains marker,
// as lines without the fence's indentation, continuation lines (`\` at the end) joined.
func blockWith(t *testing.T, doc, lang, marker string) []string {
	t.Helper()
	for _, m := range fence.FindAllStringSubmatch(doc, -1) {
		if m[2] != lang || !strings.Contains(m[3], marker) {
			continue
		}
		var out []string
		cont := false
		for _, l := range strings.Split(strings.TrimRight(m[3], "\n"), "\n") {
			l = strings.TrimPrefix(l, m[1])
			if cont {
				out[len(out)-1] += "\n" + l
			} else {
				out = append(out, l)
			}
			cont = strings.HasSuffix(l, `\`)
		}
		return out
	}
	t.Fatalf("no ```%s block with %q: the doc changed, change this test with it", lang, marker)
	return nil
}

// lines drops blank lines and comment lines.
func lines(block []string) []string {
	var out []string
	for _, l := range block {
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "#") {
			out = append(out, s)
		}
	}
	return out
}

// runnable drops from a block what cannot run here: building the binary (the test built it)
// and a command that runs the user's own agent.
func runnable(block []string) []string {
	var out []string
	for _, l := range lines(block) {
		if strings.HasPrefix(l, "go build ") || strings.Contains(l, " -- node ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// comments are the text after " # " of each line (and of the comment lines that follow it).
func comments(block []string) []string {
	var out []string
	for _, l := range block {
		if i := strings.Index(l, " # "); i >= 0 {
			out = append(out, l[i+3:])
		} else if s := strings.TrimSpace(l); strings.HasPrefix(s, "# ") {
			out = append(out, s[2:])
		}
	}
	return out
}

// outputComments is the output a doc shows under a command: the comment lines after it, up
// to the first in parentheses (a remark, not output).
func outputComments(t *testing.T, doc, command string) []string {
	block := blockWith(t, doc, "sh", command)
	for i, l := range block {
		if !strings.HasPrefix(l, command) {
			continue
		}
		var out []string
		for _, c := range block[i+1:] {
			if !strings.HasPrefix(c, "# ") || strings.HasPrefix(c, "# (") {
				break
			}
			out = append(out, c[2:])
		}
		return out
	}
	t.Fatalf("no line %q", command)
	return nil
}

type result struct {
	line, out string
	rc        int
}

func (r result) String() string { return fmt.Sprintf("$ %s\n%s\n(exit %d)", r.line, r.out, r.rc) }

// runLines runs the command lines in one bash, in dir, as a user pastes them one after the
// other (a variable set by one is seen by the next), and returns each one's output (stdout and
// stderr, trimmed) and exit code. ports maps the docs' fixed ports to the test's.
func runLines(t *testing.T, dir string, env, cmds []string, ports *strings.Replacer) []result {
	t.Helper()
	var script strings.Builder
	script.WriteString("exec 2>&1\n")
	for _, l := range lines(cmds) {
		fmt.Fprintf(&script, "%s\n__rc=$?; echo; echo \"@@rc=$__rc@@\"\n", ports.Replace(l))
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"))
	b, err := cmd.Output()
	require.NoError(t, err, string(b))
	var out []result
	rest := string(b)
	for _, l := range lines(cmds) {
		i := strings.Index(rest, "@@rc=")
		require.GreaterOrEqual(t, i, 0, "no exit code after %q:\n%s", l, b)
		j := strings.Index(rest[i:], "@@\n")
		rc, err := strconv.Atoi(rest[i+5 : i+j])
		require.NoError(t, err)
		out = append(out, result{line: l, out: strings.TrimSpace(rest[:i]), rc: rc})
		rest = rest[i+j+3:]
	}
	return out
}

func anyFile(t *testing.T, dir string, pattern *regexp.Regexp) bool {
	found := false
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if rel, _ := filepath.Rel(dir, path); pattern.MatchString(rel) {
				found = true
			}
		}
		return nil
	})
	return found
}
