package dataset_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// olderModelConfig is model_config as files hold it that were written before top_k, the
// penalties, the choice count and the output format were recorded.
type olderModelConfig struct {
	Provider      string   `parquet:"provider,optional,dict"`
	RequestModel  string   `parquet:"request_model,optional,dict"`
	ResponseModel string   `parquet:"response_model,optional,dict"`
	Temperature   *float64 `parquet:"temperature,optional"`
	TopP          *float64 `parquet:"top_p,optional"`
	MaxTokens     *int64   `parquet:"max_tokens,optional"`
	Seed          *int64   `parquet:"seed,optional"`
	Stop          []string `parquet:"stop,list"`
	ToolChoice    string   `parquet:"tool_choice,optional"`
}

type olderStep struct {
	Index       int              `parquet:"index"`
	Kind        string           `parquet:"kind,dict"`
	ModelConfig olderModelConfig `parquet:"model_config"`
}

type olderParamsCase struct {
	CaseID        string           `parquet:"case_id"`
	SchemaVersion string           `parquet:"schema_version,dict"`
	Status        string           `parquet:"status,dict"`
	StartTime     time.Time        `parquet:"start_time,timestamp(microsecond)"`
	ModelConfig   olderModelConfig `parquet:"model_config"`
	Steps         []olderStep      `parquet:"steps,list"`
}

// A file written before the new parameters existed reads with them not recorded (nil, empty),
// through the row reader and the column reader alike, and its other parameters as written.
func TestOlderFilesReadWithoutTheNewModelParameters(t *testing.T) {
	temp, seed := 0.2, int64(7)
	old := olderModelConfig{RequestModel: "gpt-4o-mini", Temperature: &temp, Seed: &seed, Stop: []string{"END"}, ToolChoice: "auto"}
	var rows []olderParamsCase
	for i, c := range edgeCases()[:9] {
		rows = append(rows, olderParamsCase{CaseID: c.CaseID, SchemaVersion: c.SchemaVersion, Status: string(c.Status), StartTime: c.StartTime,
			ModelConfig: old, Steps: []olderStep{{Index: 0, Kind: string(replaycase.StepLLM), ModelConfig: old}, {Index: 1, Kind: string(replaycase.StepTool)}}[:1+i%2]})
	}
	path := filepath.Join(t.TempDir(), "older.parquet")
	writeRows(t, path, rows)
	assert.Equal(t, len(rows), assertReadsAsTheRowReader(t, path))
	f, err := OpenCaseFile(path)
	require.NoError(t, err)
	defer f.Close()
	got, err := f.ReadCase(3)
	require.NoError(t, err)
	want := replaycase.ModelConfig{RequestModel: "gpt-4o-mini", Temperature: &temp, Seed: &seed, Stop: []string{"END"}, ToolChoice: "auto"}
	assert.Equal(t, want, got.ModelConfig)
	require.Len(t, got.Steps, 2)
	assert.Equal(t, want, got.Steps[0].ModelConfig)
}

// The new parameters are optional columns: written where recorded, NULL elsewhere, and read
// back by a reader that knows nothing of the case model.
func TestNewModelParametersAreOptionalColumns(t *testing.T) {
	w := newWriter(t)
	cases := fixtureCases(t)
	k, n := int64(40), int64(2)
	for i := range cases[0].Steps {
		if st := &cases[0].Steps[i]; st.Kind == replaycase.StepLLM {
			st.ModelConfig.TopK, st.ModelConfig.ChoiceCount, st.ModelConfig.OutputType = &k, &n, "json"
			st.ModelConfig.ResponseFormat = `{"type":"json_object"}`
			st.ModelConfig.ReasoningEffort, st.ModelConfig.Thinking = "low", `{"budget_tokens":2048,"type":"enabled"}`
			noParallel := false
			st.ModelConfig.ParallelToolCalls, st.ModelConfig.Verbosity, st.ModelConfig.LogitBias = &noParallel, "low", `{"50256":-100}`
		}
	}
	_, err := w.Write(cases)
	require.NoError(t, err)
	type params struct {
		TopK              *int64   `parquet:"top_k,optional"`
		FrequencyPenalty  *float64 `parquet:"frequency_penalty,optional"`
		ChoiceCount       *int64   `parquet:"choice_count,optional"`
		OutputType        *string  `parquet:"output_type,optional"`
		ResponseFormat    *string  `parquet:"response_format,optional"`
		ReasoningEffort   *string  `parquet:"reasoning_effort,optional"`
		ReasoningSummary  *string  `parquet:"reasoning_summary,optional"`
		Thinking          *string  `parquet:"thinking,optional"`
		ParallelToolCalls *bool    `parquet:"parallel_tool_calls,optional"`
		Verbosity         *string  `parquet:"verbosity,optional"`
		LogitBias         *string  `parquet:"logit_bias,optional"`
	}
	type row struct {
		CaseID      string `parquet:"case_id"`
		ModelConfig params `parquet:"model_config"`
	}
	var withParams, without int
	for _, file := range tree(t, w.Root()) {
		if filepath.Dir(filepath.Dir(file)) != "steps" {
			continue
		}
		rows, err := parquet.ReadFile[row](filepath.Join(w.Root(), file))
		require.NoError(t, err)
		for _, r := range rows {
			mc := r.ModelConfig
			assert.Nil(t, mc.FrequencyPenalty)
			if r.CaseID != cases[0].CaseID || mc.TopK == nil {
				assert.Equal(t, params{}, mc, "NULL where not recorded")
				without++
				continue
			}
			withParams++
			assert.Equal(t, int64(40), *mc.TopK)
			assert.Equal(t, int64(2), *mc.ChoiceCount)
			assert.Equal(t, "json", *mc.OutputType)
			assert.Equal(t, `{"type":"json_object"}`, *mc.ResponseFormat)
			assert.Equal(t, "low", *mc.ReasoningEffort)
			assert.Nil(t, mc.ReasoningSummary)
			assert.Equal(t, `{"budget_tokens":2048,"type":"enabled"}`, *mc.Thinking)
			assert.False(t, *mc.ParallelToolCalls)
			assert.Equal(t, "low", *mc.Verbosity)
			assert.Equal(t, `{"50256":-100}`, *mc.LogitBias)
		}
	}
	assert.Positive(t, withParams)
	assert.Positive(t, without)
}
