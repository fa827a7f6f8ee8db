package scrub

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Parts of a credential in neighbouring items of one list were not joined (neighbouring
// values of one map were): ["sk-proj-…", "…"] kept both parts.
func TestSplitCredentialOverListItems(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	first, second := "sk-proj-Xq3vT8pL2mN", "9rB4wK7yZ1aC5dF0gH6jE"

	for _, in := range []string{
		`{"key_parts":["` + first + `","` + second + `"]}`,
		`["` + first + `","` + second + `"]`,
		`{"args":[1,"` + first + `","` + second + `",true]}`,
	} {
		var r Report
		out := s.Text(in, &r)
		assert.NotContains(t, out, first, in)
		assert.NotContains(t, out, second, in)
		assert.Equal(t, map[string]int64{"openai_api_key": 2}, r.Counts, in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}

	m := pcommon.NewMap()
	parts := m.PutEmptySlice("parts")
	parts.AppendEmpty().SetStr(first)
	parts.AppendEmpty().SetStr(second)
	var r Report
	s.Map(m, &r)
	all := fmt.Sprint(m.AsRaw())
	assert.NotContains(t, all, first)
	assert.NotContains(t, all, second)
	assert.Equal(t, map[string]int64{"openai_api_key": 2}, r.Counts)

	// Lists of ordinary values stay as they are: tags, models, ids.
	for _, in := range []string{`{"tags":["weather","paris","forecast"]}`, `["gpt-4o-mini","claude-3-5-sonnet","text-embedding-3-small"]`,
		`{"ids":["call_1_0","call_1_1","resp_abc123"]}`, `[4111,1111,1111,1111]`} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
	// Items that are not neighbours, or are not both strings, are not joined (as for maps).
	in := `["` + first + `",1,"` + second + `"]`
	assert.Equal(t, in, s.Text(in, &Report{}))
}
