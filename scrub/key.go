package scrub

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// keyBytes is the size of a generated key: 256 random bits, far beyond brute force.
const keyBytes = 32

// DefaultKeyFile is where the key is kept when neither key nor key_file is set: the user's
// configuration directory, which is never part of a dataset root that gets shared.
func DefaultKeyFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("scrub: no key, no key_file, and no user configuration directory for the default key file (%w); set scrub.key (e.g. key: ${env:REPRISE_SCRUB_KEY}) or scrub.key_file", err)
	}
	return filepath.Join(dir, "reprise", "scrub.key"), nil
}

// loadKey returns the configured key, or the key in the key file, generating that file on
// first use.
func loadKey(cfg Config) ([]byte, error) {
	if cfg.Key != "" {
		return []byte(cfg.Key), nil
	}
	path := cfg.KeyFile
	if path == "" {
		var err error
		if path, err = DefaultKeyFile(); err != nil {
			return nil, err
		}
	}
	key, err := readKeyFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if err = createKeyFile(path); err == nil {
			key, err = readKeyFile(path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("scrub.key_file %s: %w (set scrub.key, e.g. key: ${env:REPRISE_SCRUB_KEY}, or a writable scrub.key_file outside the dataset root)", path, err)
	}
	return key, nil
}

func readKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key := strings.TrimSpace(string(b))
	if len(key) < 16 {
		return nil, fmt.Errorf("the key in the file is shorter than 16 characters")
	}
	return []byte(key), nil
}

// createKeyFile writes a new random key with mode 0600. Two components starting at once (the
// processor and the extension) may both try: the key is written to a temporary file and
// hard-linked into place, which fails if the other one won, so both end up reading one key.
func createKeyFile(path string) error {
	raw := make([]byte, keyBytes)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".scrub-key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(hex.EncodeToString(raw) + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}
