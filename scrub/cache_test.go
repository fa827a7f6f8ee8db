package scrub

import (
	"crypto/sha256"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.Positive(t, s.kinds.g.len(), "key kinds were cached")
	assert.Positive(t, s.splitClean.g.len(), "clean pairs were cached")
}

// A long string found clean is remembered by its hash and returned as it is; a long string with
// a secret is never remembered, so it is masked and counted every time.
func TestLongCleanStringsAreRememberedAndSecretsNever(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "test-key"})
	prompt := strings.Repeat("You are a weather assistant; answer briefly. ", 10)
	require.Greater(t, len(prompt), maxCachedLen)
	for range 2 {
		var r Report
		assert.Equal(t, prompt, s.Text(prompt, &r))
		assert.Empty(t, r.Counts)
	}
	assert.True(t, s.longClean.has(sha256.Sum256([]byte(prompt))))

	leaky := prompt + " my key is sk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE"
	first := s.Text(leaky, &Report{})
	for range 2 {
		var r Report
		out := s.Text(leaky, &r)
		assert.Equal(t, first, out)
		assert.NotContains(t, out, "sk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE")
		assert.Len(t, r.Counts, 1, "counted every time")
	}
	assert.False(t, s.longClean.has(sha256.Sum256([]byte(leaky))))
}

// The long-string cache keeps at most two generations: entries used recently survive a rotation.
func TestLongCleanCacheIsBounded(t *testing.T) {
	var c longCleanCache
	keep := sha256.Sum256([]byte("kept"))
	c.add(keep)
	for i := range 3 * maxLongCachedCount {
		c.add(sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)}))
		if i%1000 == 0 {
			assert.True(t, c.has(keep), "in use, so carried over")
		}
	}
	assert.LessOrEqual(t, len(c.cur)+len(c.old), 2*maxLongCachedCount)
	assert.False(t, c.has(sha256.Sum256([]byte{0, 0, 0})), "the oldest entries are gone")
}

// The short-string caches keep what repeats once ids have filled them: a string used all along
// stays, one first seen after hundreds of thousands of ids is remembered, the ids age out and
// the two generations never hold more than twice their bound.
func TestCachesKeepWhatRepeatsPastTheirBound(t *testing.T) {
	var g generations[string]
	g.put("gpt-4o-mini", "model")
	for i := range 8 * maxGenerationCount {
		g.put("call_"+strconv.Itoa(i), "")
		if i%1000 == 0 {
			_, ok := g.get("gpt-4o-mini")
			require.True(t, ok, "a string in use was dropped after %d ids", i)
		}
		if i == 5*maxGenerationCount {
			g.put("a-model-deployed-later", "new")
		}
		if i > 5*maxGenerationCount && i%1000 == 0 {
			v, ok := g.get("a-model-deployed-later")
			require.True(t, ok, "a string first seen after the caches filled was not kept")
			require.Equal(t, "new", v)
		}
		require.LessOrEqual(t, g.len(), int64(2*maxGenerationCount+1))
	}
	_, ok := g.get("call_1")
	assert.False(t, ok, "an id seen once long ago is still held")
	v, ok := g.get("gpt-4o-mini")
	assert.True(t, ok)
	assert.Equal(t, "model", v)
}

// A key looked up through a view of the caller's buffer (as splitParts does) and moved to the
// current generation is stored as a copy: changing the buffer afterwards changes nothing.
func TestCachesCopyTheKeysTheyKeep(t *testing.T) {
	var c cleanCache
	c.add("ab")
	for i := range maxGenerationCount + 1 { // "ab" is now in the old generation
		c.add(strconv.Itoa(i))
	}
	buf := []byte("ab")
	require.True(t, c.has(unsafe.String(unsafe.SliceData(buf), len(buf))))
	copy(buf, "zz")
	for i := range maxGenerationCount { // the generation "ab" was added to is gone: only the copy is left
		c.add("x" + strconv.Itoa(i))
	}
	assert.True(t, c.has("ab"))
	assert.False(t, c.has("zz"))
}

// Concurrent lookups and additions through rotations (run with -race).
func TestCachesUnderConcurrentUse(t *testing.T) {
	var g generations[int]
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range maxGenerationCount {
				k := strconv.Itoa(w*maxGenerationCount + i)
				g.put(k, i)
				if v, ok := g.get(k); ok && v != i {
					t.Errorf("%s: got %d, want %d", k, v, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, g.len(), int64(2*maxGenerationCount+8))
}
