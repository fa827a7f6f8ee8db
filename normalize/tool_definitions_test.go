package normalize

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
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
		if m, ok := want.(map[string]any); ok {
			require.Equal(t, toolDefinition(m), toolDefinition(got.(map[string]any)), "definition %q", text)
		}
	})
}
