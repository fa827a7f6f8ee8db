package replayext

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// venvPython is the Python of test/python's venv (openai and anthropic installed), or skips.
func venvPython(t *testing.T) string {
	python, err := filepath.Abs(filepath.Join("..", "test", "python", ".venv", "bin", "python"))
	require.NoError(t, err)
	if _, err := os.Stat(python); err != nil {
		t.Skip("no test/python/.venv: run scripts/test.sh once to install it")
	}
	return python
}

// Each recorded model call replayed through the official Python SDKs' stream helpers reads as
// the JSON answer does: the same text, tool calls (ids, names, arguments), finish or stop
// reason, usage and response id, ending on the API's last event.
func TestStreamsReadByTheSDKs(t *testing.T) {
	python := venvPython(t)
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	dir := t.TempDir()
	var files []string
	for i, c := range sdkRequests(t) {
		for api, body := range map[string]any{"chat": c, "responses": asResponses(t, c), "anthropic": asAnthropic(c)} {
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", api, i))
			require.NoError(t, os.WriteFile(f, raw, 0o600))
			files = append(files, f)
		}
	}
	cmd := exec.Command(python, append([]string{filepath.Join("testdata", "sdk_streams.py"), s.base + "/v1/cases/" + cases[0].CaseID}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	lines := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); lines++ {
		var got struct {
			API          string
			JSON, Stream any
			Finish       []string
			Last         string
			Usage        int
			ID           []string
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &got), sc.Text())
		assert.Equal(t, got.JSON, got.Stream, "%s: the stream reads as the JSON answer", got.API)
		require.Len(t, got.ID, 2)
		assert.Equal(t, got.ID[0], got.ID[1], "%s: the recorded response id", got.API)
		assert.Positive(t, got.Usage, "%s: usage", got.API)
		switch got.API {
		case "chat":
			assert.Equal(t, got.Finish[0], got.Finish[1], "the finish chunk")
		case "responses":
			assert.Equal(t, "response.completed", got.Last)
		case "anthropic":
			assert.Equal(t, "message_stop", got.Last)
		}
		t.Log(sc.Text())
	}
	assert.Equal(t, len(files), lines)
}
