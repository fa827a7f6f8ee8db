package kafka

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/reprise-dev/reprise/internal/testcollector"
)

// requiredVar is a ${env:NAME} reference without a default.
var requiredVar = regexp.MustCompile(`\$\{env:([A-Z][A-Z0-9_]*)\}`)

// envAssignment is one NAME=value word of a shell command.
var envAssignment = regexp.MustCompile(`^[A-Z][A-Z0-9_]*=\S*$`)

// documentedEnv is the environment the command that starts config in text sets: the NAME=value
// words of the lines continued (\) into `go run ./cmd/reprise --config config/<config>`. Lines
// may be comments (a config file's header).
func documentedEnv(t *testing.T, text, config string) []string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "go run ./cmd/reprise --config config/"+config) {
			continue
		}
		var env []string
		for j := i - 1; j >= 0; j-- {
			prev := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[j]), "#"))
			if !strings.HasSuffix(prev, `\`) {
				break
			}
			for _, w := range strings.Fields(strings.TrimSuffix(prev, `\`)) {
				if envAssignment.MatchString(w) {
					env = append(env, w)
				}
			}
		}
		return env
	}
	t.Fatalf("no command starting config/%s", config)
	return nil
}

// The commands docs/scale-out.md and the configs' own headers give for each tier start the
// collector (`reprise validate` with exactly the environment they set) and set every variable
// the config reads without a default. The tier-2 command of the docs set no REPRISE_S3_URL, and the config's
// object_store block then refused to start: "url is required".
func TestDocumentedCommandsStartTheShippedConfigs(t *testing.T) {
	if binary == "" {
		t.Skip("REPRISE_BIN not set (scripts/test.sh sets it; test/kafka/run.sh builds the collector)")
	}
	root := testcollector.RepoRoot()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "scale-out.md"))
	require.NoError(t, err)
	for _, config := range []string{"tier1-kafka.yaml", "tier2-kafka.yaml"} {
		header, err := os.ReadFile(filepath.Join(root, "config", config))
		require.NoError(t, err)
		for where, text := range map[string]string{"docs/scale-out.md": string(doc), "config/" + config: string(header)} {
			env := documentedEnv(t, text, config)
			require.NotEmpty(t, env, "%s: the command for %s sets no variable", where, config)
			// A variable without a default that is unset stops the collector (confmap/provider/strictenvprovider);
			// with upstream's env provider it expanded to "" and the collector started anyway:
			// REPRISE_INSTANCE empty was no static membership (partitions of the two topics no
			// longer went to the same collector), REPRISE_SCRUB_KEY empty a random key per host.
			for _, m := range requiredVar.FindAllStringSubmatch(string(header), -1) {
				assert.True(t, slices.ContainsFunc(env, func(a string) bool { return strings.HasPrefix(a, m[1]+"=") }),
					"%s: the command for %s does not set %s, which the config reads without a default", where, config, m[1])
			}
			cmd := exec.Command(binary, "validate", "--config", filepath.Join(root, "config", config))
			cmd.Dir = t.TempDir()
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
			out, err := cmd.CombinedOutput()
			assert.NoError(t, err, "%s: the command for %s (%s) does not start:\n%s", where, config, strings.Join(env, " "), out)
		}
	}
}

// Tier 2 keeps the cases open at a graceful stop in its storage: a rolling restart gets its
// partitions back (static membership) and continues its runs instead of splitting them.
func TestTier2KeepsOpenCasesAcrossARestart(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testcollector.RepoRoot(), "config", "tier2-kafka.yaml"))
	require.NoError(t, err)
	var cfg struct {
		Processors struct {
			ReplayCase struct {
				Storage            string `yaml:"storage"`
				KeepOpenOnShutdown bool   `yaml:"keep_open_on_shutdown"`
			} `yaml:"replay_case"`
		} `yaml:"processors"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	assert.NotEmpty(t, cfg.Processors.ReplayCase.Storage)
	assert.True(t, cfg.Processors.ReplayCase.KeepOpenOnShutdown)
}

// A record tier 2 cannot decode is skipped (logged and counted by the receiver), not left
// unmarked: a permanent failure left unmarked paused its partition until a rebalance, and the
// next owner stopped at the same record, so every later run of the partition waited for Kafka's
// retention to delete it.
func TestTier2SkipsRecordsItCannotDecode(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testcollector.RepoRoot(), "config", "tier2-kafka.yaml"))
	require.NoError(t, err)
	type marking struct {
		After            bool `yaml:"after"`
		OnError          bool `yaml:"on_error"`
		OnPermanentError bool `yaml:"on_permanent_error"`
	}
	var cfg struct {
		Receivers map[string]struct {
			MessageMarking marking `yaml:"message_marking"`
		} `yaml:"receivers"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	require.Len(t, cfg.Receivers, 2)
	for name, r := range cfg.Receivers {
		assert.Equal(t, marking{After: true, OnError: false, OnPermanentError: true}, r.MessageMarking, name)
	}
}

// Every tier-2 collector must scrub with the same key: the documented command without
// REPRISE_SCRUB_KEY expanded key: ${env:REPRISE_SCRUB_KEY} to "" and started anyway, with a
// random key in a key file of its own (placeholders of one secret then differ between the
// collectors, and replays scrubbed with another key do not match). Unset, the variable stops
// the collector (confmap/provider/strictenvprovider); set empty, scrub.require_key does, naming the field and
// the variable.
func TestTier2ConfigRefusesToStartWithoutTheScrubKey(t *testing.T) {
	if binary == "" {
		t.Skip("REPRISE_BIN not set (scripts/test.sh sets it; test/kafka/run.sh builds the collector)")
	}
	root := testcollector.RepoRoot()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "scale-out.md"))
	require.NoError(t, err)
	env := slices.DeleteFunc(documentedEnv(t, string(doc), "tier2-kafka.yaml"), func(a string) bool {
		return strings.HasPrefix(a, "REPRISE_SCRUB_KEY=")
	})
	for _, c := range []struct {
		key  []string
		want string
	}{
		{nil, "environment variable REPRISE_SCRUB_KEY is not set and ${env:REPRISE_SCRUB_KEY} gives no default"},
		{[]string{"REPRISE_SCRUB_KEY="}, "scrub.key is empty and scrub.require_key is true"},
	} {
		home := t.TempDir()
		cmd := exec.Command(binary, "validate", "--config", filepath.Join(root, "config", "tier2-kafka.yaml"))
		cmd.Dir = t.TempDir()
		cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}, env...), c.key...)
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the tier-2 command with %v for REPRISE_SCRUB_KEY started:\n%s", c.key, out)
		assert.Contains(t, string(out), c.want)
		assert.Contains(t, string(out), "REPRISE_SCRUB_KEY")
		assert.NoDirExists(t, filepath.Join(home, ".config", "reprise"), "no random key file written")
	}
}
