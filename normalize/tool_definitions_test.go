package normalize

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// Tool definitions read with their schemas kept as text (decodeToolJSON) are those read from
// the whole tree, for any text: as an array (gen_ai.tool.definitions, Vercel's tools) and as
// one definition (OpenInference's llm.tools.N.tool.json_schema).
func FuzzToolDefinitionsFromKeptSchemas(f *testing.F) {
	for _, s := range requestSeeds(f) {
		f.Add(s)
	}
	f.Add(`[{"type":"function","function":{"name":"f","parameters":{"b":[1],"a":"<"}}},{"name":"g","input_schema":{"type":"object"}}]`)
	f.Add(`{"type":"function","name":"v","inputSchema":{"json":{"b":1,"a":2}},"parameters":null}`)
	f.Fuzz(func(t *testing.T, text string) {
		v := pcommon.NewValueStr(text)
		want, wantErr := decodeAny(v, true)
		got, gotErr := decodeToolJSON(v)
		require.Equal(t, wantErr == nil, gotErr == nil, "decoding %q", text)
		if wantErr != nil {
			return
		}
		wantDefs, wantErr := toolDefinitions(want)
		gotDefs, gotErr := toolDefinitions(got)
		require.Equal(t, wantErr, gotErr, "definitions of %q", text)
		require.Equal(t, wantDefs, gotDefs, "definitions of %q", text)
		// Read through recordedTools, the first time and again (from the cache when kept).
		for range 2 {
			read, err := readToolDefinitions(v)
			require.NoError(t, err)
			require.Equal(t, toolsRead{wantDefs, wantErr}, read, "read of %q", text)
		}
		if m, ok := want.(map[string]any); ok {
			want := []replaycase.ToolDefinition{toolDefinition(m)}
			require.Equal(t, want, []replaycase.ToolDefinition{toolDefinition(got.(map[string]any))}, "definition %q", text)
			require.Equal(t, want, openInferenceTool(v), "definition %q", text)
			require.Equal(t, want, openInferenceTool(v), "definition %q, again", text)
		}
	})
}

// The tool definitions a recorded text gives are read once and kept: a second case built from
// the same telemetry has the same definitions, changing them changes no later case, and a list
// with a problem is read, and reported, every time.
func TestRecordedToolsAreReadOnce(t *testing.T) {
	recordedTools, recordedToolLists = newToolCache(), newToolCache()
	for _, run := range []string{testfixtures.OpenInference, testfixtures.Traceloop} {
		td, logs := testfixtures.Traces(t, run), testfixtures.Logs(t, run)
		require.NoError(t, testfixtures.OfferTools(td, testfixtures.ManyTools(3)))
		first, _, _ := Build(td, logs)
		kept := len(recordedTools.byText) + len(recordedToolLists.byText)
		second, _, _ := Build(td, logs)
		require.Equal(t, first, second, run)
		require.Equal(t, kept, len(recordedTools.byText)+len(recordedToolLists.byText), "%s: nothing new to keep", run)
		for _, st := range second.Steps {
			for i := range st.ToolDefinitions {
				st.ToolDefinitions[i].Name = "changed"
			}
		}
		third, _, _ := Build(td, logs)
		require.Equal(t, first, third, "%s: a case's definitions are its own", run)
	}
	require.Len(t, recordedTools.byText, 3, "OpenInference's three schemas")
	require.Len(t, recordedToolLists.byText, 1, "OpenLLMetry's list")

	td := testfixtures.Traces(t, testfixtures.Traceloop)
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				if _, ok := span.Attributes().Get("gen_ai.tool.definitions"); ok {
					span.Attributes().PutStr("gen_ai.tool.definitions", `[{"name":"f","parameters":{}}, 3]`)
				}
			}
		}
	}
	logs := testfixtures.Logs(t, testfixtures.Traceloop)
	_, first, _ := Build(td, logs)
	_, second, _ := Build(td, logs)
	require.NotEmpty(t, first)
	require.Equal(t, first, second)
}

// The cache holds at most maxTextCacheBytes of texts, and no single text of more than a
// quarter of that.
func TestRecordedToolsBounded(t *testing.T) {
	c := newToolCache()
	defs := []replaycase.ToolDefinition{{Name: "f"}}
	c.put(strings.Repeat("x", maxTextCacheBytes/4+1), defs)
	require.Empty(t, c.byText)
	for i := range 100 {
		c.put(strconv.Itoa(i)+strings.Repeat("y", maxTextCacheBytes/10), defs)
		require.LessOrEqual(t, c.bytes, maxTextCacheBytes)
	}
	got, ok := c.get("99" + strings.Repeat("y", maxTextCacheBytes/10))
	require.True(t, ok)
	require.Equal(t, defs, got)
}
