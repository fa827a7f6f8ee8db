package scrub

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A keyless start must not use a constant: two fresh key files give different placeholders,
// and the key is random, persisted with 0600, and reused.
func TestKeylessStartGeneratesAndKeepsARandomKey(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a", "scrub.key"), filepath.Join(dir, "b", "scrub.key")
	email := "jane.doe@example-corp.com"

	a := newScrubber(t, Config{Enabled: true, KeyFile: first})
	b := newScrubber(t, Config{Enabled: true, KeyFile: second})
	assert.NotEqual(t, a.Text(email, &Report{}), b.Text(email, &Report{}), "each keyless start gets its own random key")

	info, err := os.Stat(first)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	key, err := os.ReadFile(first)
	require.NoError(t, err)
	assert.Len(t, key, 2*keyBytes+1, "256 random bits in hex and a newline")

	again := newScrubber(t, Config{Enabled: true, KeyFile: first})
	assert.Equal(t, a.Text(email, &Report{}), again.Text(email, &Report{}), "a later start reuses the key")
	explicit := newScrubber(t, Config{Enabled: true, Key: "an-explicit-key", KeyFile: first})
	assert.NotEqual(t, a.Text(email, &Report{}), explicit.Text(email, &Report{}), "an explicit key wins over the file")
}

// The processor and the extension start at the same time with the same key_file: they must
// end up with one key.
func TestConcurrentKeylessStartsAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scrub.key")
	out := make([]string, 8)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := New(Config{Enabled: true, KeyFile: path})
			if assert.NoError(t, err) {
				out[i] = s.Text("jane.doe@example-corp.com", &Report{})
			}
		}()
	}
	wg.Wait()
	for _, o := range out {
		assert.Equal(t, out[0], o)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

func TestUnusableKeyFileIsAClearError(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short.key")
	require.NoError(t, os.WriteFile(short, []byte("abc\n"), 0o600))
	_, err := New(Config{Enabled: true, KeyFile: short})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scrub.key_file")
	assert.Contains(t, err.Error(), "REPRISE_SCRUB_KEY")
}

// A scaled-out tier reads its key from ${env:REPRISE_SCRUB_KEY}, which is "" when the variable is
// set empty (or unset, in a collector built with upstream's env provider): with require_key that
// is a configuration error naming the field and the variable, not a random key per collector.
func TestRequiredKeyMustBeSet(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "scrub.key")
	cfg := Config{Enabled: true, RequireKey: true, KeyFile: keyFile}
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scrub.key is empty and scrub.require_key is true")
	assert.Contains(t, err.Error(), "REPRISE_SCRUB_KEY")
	_, err = New(cfg)
	require.Error(t, err, "no scrubber with a key of its own")
	assert.NoFileExists(t, keyFile, "no random key written")

	cfg.Key = "a-shared-secret-key"
	require.NoError(t, cfg.Validate())
	_, err = New(cfg)
	require.NoError(t, err)
	require.NoError(t, (&Config{Enabled: true, KeyFile: keyFile}).Validate(), "without require_key an empty key still falls back to key_file")
	require.NoError(t, (&Config{Enabled: false, RequireKey: true}).Validate(), "scrubbing off needs no key")
}
