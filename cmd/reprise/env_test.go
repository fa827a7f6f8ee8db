package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testcollector"
)

// binary is the collector built from this package (see testcollector.Main): `validate` is the
// collector's own subcommand, which the test binary does not run.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testcollector.Main(m, &binary))
}

// validate runs `reprise validate --config config` with only env (and PATH, and a HOME of its own).
func validate(t *testing.T, config string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, "validate", "--config", config)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// config/tier2-kafka.yaml's staging folder is per instance. Started without REPRISE_INSTANCE it
// was ./reprise-data.staging- for every collector started the same way (and no static Kafka
// membership): the collector only warned and started.
func TestAnUnsetVariableWithoutADefaultStopsTheCollector(t *testing.T) {
	config := filepath.Join(t.TempDir(), "instance.yaml")
	require.NoError(t, os.WriteFile(config, []byte(`
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:0"}}}}
processors: {replay_case: {}}
exporters:
  replay_parquet:
    directory: ./reprise-data
    staging_directory: ./reprise-data.staging-${env:REPRISE_TEST_INSTANCE}
service: {pipelines: {traces: {receivers: [otlp], processors: [replay_case], exporters: [replay_parquet]}}}
`), 0o600))

	out, err := validate(t, config)
	require.Error(t, err, "started without REPRISE_TEST_INSTANCE:\n%s", out)
	assert.Contains(t, out, "environment variable REPRISE_TEST_INSTANCE is not set and ${env:REPRISE_TEST_INSTANCE} gives no default: set it, or write ${env:REPRISE_TEST_INSTANCE:-<default>}")

	out, err = validate(t, config, "REPRISE_TEST_INSTANCE=tier2-a")
	assert.NoError(t, err, "the same config with the variable set:\n%s", out)
	out, err = validate(t, config, "REPRISE_TEST_INSTANCE=")
	assert.NoError(t, err, "a variable set empty is set on purpose:\n%s", out)
}

// The README's first command runs config/local.yaml on a fresh clone, where no variable is set:
// every ${env:…} it reads has a default.
func TestTheLocalConfigNeedsNoVariable(t *testing.T) {
	out, err := validate(t, filepath.Join(testcollector.RepoRoot(), "config", "local.yaml"))
	require.NoError(t, err, out)
	assert.NotContains(t, out, "rror", out)
	assert.NotContains(t, out, "unset environment variable", out)
}
