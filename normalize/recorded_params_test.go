package normalize

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// For any text, openInferenceParams gives the model configuration and the findings of reading
// the text, the first time and every time after (from the cache when the text was kept), and
// keeps only objects read without a finding.
func FuzzOpenInferenceParamsReadOnce(f *testing.F) {
	for _, s := range requestSeeds(f) {
		f.Add(s)
	}
	f.Add(`{"model":"m","temperature":0.5,"top_p":1,"max_tokens":9,"seed":3,"stop":["a","b"],"tool_choice":{"type":"function","function":{"name":"f"}}}`)
	f.Add(`{"id":"resp_1","created_at":1,"temperature":0.1}`)
	f.Add(`{"temperature":"hot","model":"m"}`)
	f.Fuzz(func(t *testing.T, text string) {
		recordedParams = newTextCache(cloneModelConfig)
		a := pcommon.NewMap()
		a.PutStr("llm.invocation_parameters", text)
		want := stepBuilder{spanID: "s"}
		wantConfig, isObject := readOpenInferenceParams(a, &want)
		for i := range 3 {
			got := stepBuilder{spanID: "s"}
			require.Equal(t, wantConfig, openInferenceParams(a, &got), "read %d of %q", i, text)
			require.Equal(t, want.Findings, got.Findings, "findings of read %d of %q", i, text)
		}
		_, kept := recordedParams.byText[text]
		require.Equal(t, isObject && len(want.Findings) == 0, kept, "kept %q", text)
	})
}

// A second and a third case built from the same OpenInference telemetry have the model
// configuration of the first, even after the second's was changed, and the text was kept once.
func TestRecordedParamsAreReadOnce(t *testing.T) {
	recordedParams = newTextCache(cloneModelConfig)
	td, logs := testfixtures.Traces(t, testfixtures.OpenInference), testfixtures.Logs(t, testfixtures.OpenInference)
	first, _, _ := Build(td, logs)
	require.NotEmpty(t, recordedParams.byText, "the fixture's parameters were kept")
	kept := len(recordedParams.byText)
	second, _, _ := Build(td, logs)
	require.Equal(t, first, second)
	changed := 0
	for i := range second.Steps {
		mc := &second.Steps[i].ModelConfig
		if mc.Temperature != nil {
			*mc.Temperature += 1
			changed++
		}
		mc.Stop = append(mc.Stop, "changed")
	}
	require.NotZero(t, changed, "the fixture records a temperature")
	third, _, _ := Build(td, logs)
	require.Equal(t, first, third)
	require.Len(t, recordedParams.byText, kept, "nothing new to keep")
}
