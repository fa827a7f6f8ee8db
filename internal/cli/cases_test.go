package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/replayext"
)

// export → import into an empty dataset → export again gives the same bytes, and the rows in
// the new dataset are the exported cases, ids and provenance included. A second import adds
// nothing.
func TestExportImportRoundTrip(t *testing.T) {
	src, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	require.Len(t, cases, 2)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.parquet"), filepath.Join(dir, "second.parquet")
	dst := filepath.Join(dir, "other-dataset")

	code, out, errOut := run(t, "export", cases[0].CaseID, cases[1].CaseID[:8], "--dataset", src, "--out", first)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "exported 2 cases")
	code, out, errOut = run(t, "import", first, "--dataset", dst)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "imported 2 cases")
	code, out, errOut = run(t, "import", first, "--dataset", dst)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "imported 0 cases", "importing the same file twice adds nothing")
	assert.Contains(t, out, "2 were already there")

	exported, err := dataset.ReadCases(first)
	require.NoError(t, err)
	imported, err := readDataset(dst)
	require.NoError(t, err)
	require.Len(t, imported, 2)
	byID := map[string]replaycase.Case{}
	for _, c := range imported {
		byID[c.CaseID] = *c
	}
	for _, c := range exported {
		assert.Equal(t, c, byID[c.CaseID])
	}
	files, err := dataset.NewLister(dst, dataset.Cases, dataset.Quarantine, dataset.Steps).Next()
	require.NoError(t, err)
	assert.Len(t, files, 3, "one import wrote cases/, steps/ and quarantine/ once")

	code, _, errOut = run(t, "export", cases[0].CaseID, cases[1].CaseID, "--dataset", dst, "--out", second)
	require.Equal(t, ExitOK, code, errOut)
	a, err := os.ReadFile(first)
	require.NoError(t, err)
	b, err := os.ReadFile(second)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b), "the round trip is byte for byte the same file")
}

func TestImportRefusesWhatIsNotAnExport(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "x.parquet")
	require.NoError(t, os.WriteFile(bad, []byte("not parquet"), 0o644))
	code, _, errOut := run(t, "import", bad, "--dataset", t.TempDir())
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "reprise import:")
	code, _, _ = run(t, "import", bad)
	assert.Equal(t, ExitError, code, "--dataset is required")
}

// startReplay serves root with the replay extension on a free port and returns its base URL.
func startReplay(t *testing.T, root string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	f := replayext.NewFactory()
	cfg := f.CreateDefaultConfig().(*replayext.Config)
	cfg.Directory, cfg.NetAddr.Endpoint = root, addr
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	return "http://" + addr
}

func post(t *testing.T, url string, body []byte) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

// A mutated case is a new case in the dataset, and the replay extension serves its edited
// step over HTTP while the original still serves what was recorded.
func TestMutateServesTheEditedStep(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	orig := cases[0]

	code, out, errOut := run(t, "mutate", orig.CaseID, "--step", "2", "--tool-error", "weather service down", "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	failed := strings.TrimSpace(out)
	require.NotEqual(t, orig.CaseID, failed)
	code, out, _ = run(t, "mutate", orig.CaseID, "--step", "2", "--tool-error", "weather service down", "--dataset", root)
	require.Equal(t, ExitOK, code)
	assert.Equal(t, failed, strings.TrimSpace(out), "the same edit is the same case")

	code, out, errOut = run(t, "mutate", orig.CaseID, "--step", "1", "--response", `"It is sunny in Paris."`, "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	answered := strings.TrimSpace(out)

	all, err := readDataset(root)
	require.NoError(t, err)
	require.Len(t, all, 3, "the original and two derived cases, each once")
	i := slices.IndexFunc(all, func(c *replaycase.Case) bool { return c.CaseID == failed })
	require.GreaterOrEqual(t, i, 0, "the derived case %s is in the dataset", failed)
	assert.Equal(t, orig.CaseID, all[i].Metadata["derived_from"])
	assert.JSONEq(t, `{"step":2,"edit":"tool_error","value":"weather service down"}`, all[i].Metadata["mutation"])
	assert.Equal(t, replaycase.StepError, all[i].Steps[2].Status)

	base := startReplay(t, root)
	args := []byte(`{"city":"Paris","unit":"celsius"}`)
	got := post(t, fmt.Sprintf("%s/v1/cases/%s/tools/get_weather", base, failed), args)
	assert.Equal(t, "weather service down", got["error"])
	assert.Empty(t, got["result"])
	got = post(t, fmt.Sprintf("%s/v1/cases/%s/tools/get_weather", base, orig.CaseID), args)
	assert.Contains(t, got["result"], `"temperature":14`, "the original is unchanged")

	request, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "..", "requests", "weather-first-call.json"))
	require.NoError(t, err)
	got = post(t, fmt.Sprintf("%s/v1/cases/%s/openai/v1/chat/completions", base, answered), request)
	choice := got["choices"].([]any)[0].(map[string]any)
	assert.Equal(t, "It is sunny in Paris.", choice["message"].(map[string]any)["content"])
	assert.Equal(t, "stop", choice["finish_reason"])
}

func TestMutateRefusesAMismatchedEdit(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	for _, args := range [][]string{
		{"--step", "1", "--tool-result", `{"x":1}`},               // step 1 is an llm step
		{"--step", "2", "--response", `"hi"`},                     // step 2 is a tool step
		{"--step", "2", "--tool-result", `not json`},              // not JSON
		{"--step", "9", "--tool-error", "x"},                      // no such step
		{"--step", "2", "--tool-error", "x", "--response", `"y"`}, // two edits
		{"--tool-error", "x"},                                     // no step
	} {
		code, _, errOut := run(t, append([]string{"mutate", cases[0].CaseID, "--dataset", root}, args...)...)
		assert.Equal(t, ExitError, code, "%v: %s", args, errOut)
	}
	all, err := readDataset(root)
	require.NoError(t, err)
	assert.Len(t, all, 1, "nothing written")
}

func TestMutateResponseForms(t *testing.T) {
	msgs, err := parseResponse(`"plain text"`)
	require.NoError(t, err)
	assert.Equal(t, []replaycase.Message{{Role: "assistant", Parts: []replaycase.Part{{Type: "text", Content: "plain text"}}}}, msgs)

	msgs, err = parseResponse(`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}]}`)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, "get_weather", msgs[0].Parts[0].Name)

	msgs, err = parseResponse(`[{"role":"assistant","finish_reason":"length","parts":[{"type":"text","content":"a"}]}]`)
	require.NoError(t, err)
	assert.Equal(t, "length", msgs[0].FinishReason)

	for _, bad := range []string{`{"role":"assistant"}`, `[{"parts":[{"type":"text"}]}]`, `not json`, `42`} {
		_, err := parseResponse(bad)
		assert.Error(t, err, bad)
	}
}
