package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/dataset"
)

// checkRoot refuses a --dataset or --out that is not a dataset root. One dataset's own
// directory (cases/, quarantine/ or steps/ of a root, which holds the dt=… partitions) is the
// natural slip: read as a root it held no case, so `reprise ls` listed nothing and exited 0,
// and mutate and import wrote a dataset inside it, which no reader of the root finds. A root
// that does not exist is an error when it is read (mustExist), and created when it is written.
func checkRoot(root string, mustExist bool) error {
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !mustExist:
		return nil
	case err != nil:
		return fmt.Errorf("dataset %s: %w", root, err)
	case !st.IsDir():
		return fmt.Errorf("dataset %s is a file, not a dataset root (the directory that holds cases/ and quarantine/)", root)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("dataset %s: %w", root, err)
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), dataset.PartitionKey+"=") {
			clean := filepath.Clean(root)
			return fmt.Errorf("dataset %s holds %s partitions: it is the %s/ directory of a dataset, not its root; give %s",
				root, e.Name(), filepath.Base(clean), filepath.Dir(clean))
		}
	}
	return nil
}
