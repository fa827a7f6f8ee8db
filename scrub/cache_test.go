package scrub

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The caches only skip work: a map scrubbed a second time (keys, pairs and values now cached)
// comes out exactly as the first time, secrets masked and clean values kept.
func TestCachedKeysAndPairsScrubTheSameAgain(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "test-key"})
	scrubOnce := func() (pcommon.Map, Report) {
		m := pcommon.NewMap()
		m.PutStr("gen_ai.provider.name", "openai")
		m.PutStr("gen_ai.request.model", "gpt-4o-mini")
		m.PutStr("key_part_1", "sk-proj-Xq3vT8pL2mN")
		m.PutStr("key_part_2", "9rB4wK7yZ1aC5dF0gH6jE")
		m.PutStr("api_key", "hunter2-is-my-password")
		var r Report
		s.Map(m, &r)
		return m, r
	}
	first, r1 := scrubOnce()
	second, r2 := scrubOnce()
	assert.Equal(t, first.AsRaw(), second.AsRaw())
	assert.Equal(t, r1.Counts, r2.Counts)
	v, _ := second.Get("key_part_2")
	assert.Contains(t, v.Str(), "<secret:", "the split credential is masked again")
	v, _ = second.Get("api_key")
	assert.Contains(t, v.Str(), "<secret:"+KindSecretField+":", "the cached key kind still masks")
	v, _ = second.Get("gen_ai.request.model")
	assert.Equal(t, "gpt-4o-mini", v.Str())
	assert.Positive(t, s.kinds.n.Load(), "key kinds were cached")
	assert.Positive(t, s.splitClean.n.Load(), "clean pairs were cached")
}
