package cli

import (
	"os"
	"path/filepath"
)

// writeFileAtomic writes data to path through a temporary file in the same directory, synced
// and then renamed over path: a reader (a CI step collecting junit.xml, a job uploading the
// JSON report) sees the previous file or the whole new one, never a truncated or partial one.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	// CreateTemp makes the file 0600; keep the mode os.WriteFile gave the reports.
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
