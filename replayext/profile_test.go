package replayext

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// TestProfileUnderLoad profiles the extension in-process, with its real HTTP server
// (confighttp's middleware included), while wrk sends the recorded agent's first Chat
// Completions request over one connection. It runs only when asked:
//
//	REPRISE_REPLAY_CPUPROFILE=/tmp/replay.cpu go test -run TestProfileUnderLoad -v ./replayext/
//	go tool pprof -top /tmp/replay.cpu
func TestProfileUnderLoad(t *testing.T) {
	out := os.Getenv("REPRISE_REPLAY_CPUPROFILE")
	if out == "" {
		t.Skip("set REPRISE_REPLAY_CPUPROFILE to a profile path (needs wrk)")
	}
	wrk, err := exec.LookPath("wrk")
	require.NoError(t, err)
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	body, err := json.Marshal(sdkRequests(t)[0])
	require.NoError(t, err)
	quoted, err := json.Marshal(string(body)) // a Lua string literal: JSON's escapes are Lua's
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "post.lua")
	require.NoError(t, os.WriteFile(script, fmt.Appendf(nil, "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = %s\n", quoted), 0o600))

	f, err := os.Create(out)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, pprof.StartCPUProfile(f))
	cmd := exec.Command(wrk, "-t1", "-c1", "-d5s", "--latency", "-s", script, s.base+"/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions")
	report, err := cmd.CombinedOutput()
	pprof.StopCPUProfile()
	require.NoError(t, err, string(report))
	t.Log(string(report))
}
