package replayext

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
)

const (
	question   = "What is the weather in Paris today?"
	realNumber = "+1 415-555-0134"
)

// replaceText rewrites every string attribute of every span.
func replaceText(td ptrace.Traces, old, repl string) {
	var walk func(v pcommon.Value)
	walk = func(v pcommon.Value) {
		switch v.Type() {
		case pcommon.ValueTypeStr:
			v.SetStr(strings.ReplaceAll(v.Str(), old, repl))
		case pcommon.ValueTypeMap:
			for _, x := range v.Map().All() {
				walk(x)
			}
		case pcommon.ValueTypeSlice:
			for i := 0; i < v.Slice().Len(); i++ {
				walk(v.Slice().At(i))
			}
		}
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				for _, v := range sp.Attributes().All() {
					walk(v)
				}
			}
		}
	}
}

// The oracle attack: one request carrying 2,000 guesses of a phone number that the dataset
// holds scrubbed. The answer is byte-identical whether or not the real number is among the
// guesses, in strict mode and in the lenient divergence log.
func TestGuessesGetTheSameAnswerWhetherOrNotOneIsRight(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	td := testfixtures.Traces(t, testfixtures.OpenInference)
	testfixtures.WithTraceID(td, plog.NewLogs(), 0)
	replaceText(td, question, question+" Call me on "+realNumber+".")
	exp := testdataset.Writer(t, root, "zstd")
	cases := testpipeline.RunTraces(t, exp, []string{testfixtures.OpenInference}, []ptrace.Traces{td})
	require.NoError(t, exp.Shutdown(context.Background()))
	require.Len(t, cases, 1)
	require.Contains(t, cases[0].Steps[1].InputMessages[1].Parts[0].Content, "<secret:phone_number:", "the dataset holds the number scrubbed")
	require.NotContains(t, cases[0].Steps[1].InputMessages[1].Parts[0].Content, realNumber)

	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	attack := func(includeReal bool, headers map[string]string) (int, string) {
		guesses := make([]string, 2000)
		for i := range guesses {
			guesses[i] = fmt.Sprintf("+1 415-555-%04d", (i+135)%10000)
		}
		if includeReal {
			guesses[1234] = realNumber
		}
		req := sdkRequests(t)[0]
		req["messages"].([]any)[1].(map[string]any)["content"] = question + " Call me on " + strings.Join(guesses, " or ") + "."
		resp, body := s.do("POST", path, req, headers)
		return resp.StatusCode, string(body)
	}
	wrongStatus, wrong := attack(false, nil)
	rightStatus, right := attack(true, nil)
	assert.Equal(t, http.StatusNotFound, wrongStatus)
	assert.Equal(t, wrongStatus, rightStatus)
	assert.Equal(t, wrong, right, "the answer must not depend on whether a guess is right")
	assert.NotContains(t, wrong, "<secret:")
	assert.NotContains(t, wrong, "415-555")

	lenient := func(session string, includeReal bool) string {
		status, _ := attack(includeReal, map[string]string{headerMode: ModeLenient.String(), headerSession: session})
		require.Equal(t, http.StatusOK, status)
		_, body := s.do("GET", "/v1/divergences", nil, map[string]string{headerSession: session})
		return string(body)
	}
	withoutReal, withReal := lenient("guess-a", false), lenient("guess-b", true)
	assert.Contains(t, withoutReal, `"messages[1].content[0].text"`, "the log holds the divergence: the comparison is not of two empty logs")
	assert.Equal(t, stripTimes(withoutReal), stripTimes(withReal))
	assert.NotContains(t, withReal, "<secret:")
}

// stripTimes drops the divergence timestamps, the one field that differs between two calls.
func stripTimes(body string) string {
	i := strings.Index(body, `"time":"`)
	if i < 0 {
		return body
	}
	j := strings.Index(body[i+8:], `"`)
	return body[:i] + body[i+8+j+1:]
}

// With local_debug, a developer on their own machine sees the values.
func TestLocalDebugShowsValues(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, func(c *Config) { c.LocalDebug = true })
	req := sdkRequests(t)[0]
	req["messages"].([]any)[1].(map[string]any)["content"] = "What is the weather in Lyon today?"
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", req, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, string(body), `"recorded":"What is the weather in Paris today?"`)
	assert.Contains(t, string(body), `"requested":"What is the weather in Lyon today?"`)
}
