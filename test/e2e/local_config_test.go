package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testcollector"
)

// localConfig is config/local.yaml with free ports and its directories under dir.
func localConfig(t *testing.T, dir string) (cfg string, otlpHTTP, otlpGRPC int) {
	b, err := os.ReadFile(filepath.Join(testcollector.RepoRoot(), "config", "local.yaml"))
	require.NoError(t, err)
	otlpHTTP, otlpGRPC = testcollector.FreePort(t), testcollector.FreePort(t)
	cfg = strings.NewReplacer(
		"127.0.0.1:4317", fmt.Sprintf("127.0.0.1:%d", otlpGRPC),
		"127.0.0.1:4318", fmt.Sprintf("127.0.0.1:%d", otlpHTTP),
		"127.0.0.1:8790", fmt.Sprintf("127.0.0.1:%d", testcollector.FreePort(t)),
		"./reprise-data", filepath.Join(dir, "reprise-data"),
		// the collector's own metrics listen on a fixed port (8888) that parallel tests share
		"\nservice:\n", "\nservice:\n  telemetry:\n    metrics:\n      level: none\n",
	).Replace(string(b))
	return cfg, otlpHTTP, otlpGRPC
}

// Problem 11: with the local defaults, a client that never finishes its request headers is cut
// off after read_header_timeout (10 s) instead of holding a connection for minutes.
func TestLocalConfigCutsOffIncompleteHeaders(t *testing.T) {
	t.Setenv("REPRISE_SCRUB_KEY", "e2e-key")
	cfg, port, _ := localConfig(t, t.TempDir())
	c := launch(t, cfg, port)
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"))
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err = io.ReadAll(conn)
	held := time.Since(start)
	require.NoError(t, err, "the server closed the connection (a read deadline error means it did not)")
	assert.Less(t, held, 15*time.Second, "cut off at read_header_timeout")
	t.Logf("incomplete request cut off after %s", held.Round(100*time.Millisecond))
	c.stop(t)
}
