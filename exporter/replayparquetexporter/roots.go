package replayparquetexporter

import (
	"fmt"
	"path/filepath"
	"sync"
)

// Exporters of one collector that share a local root must mirror it to the same bucket (or to
// none): the object store uploads every local file its bucket lacks, so an exporter mirroring
// root R to bucket A would upload into A the files another exporter wrote into R for bucket B
// (or for no bucket at all). Two s3:// directories without local_directory both default to
// ./reprise-data, which is how this happens by accident.

var (
	rootsMu sync.Mutex
	roots   = map[string]rootUse{} // absolute local root → its use by running exporters
)

type rootUse struct {
	mirror string // the bucket the root is mirrored to, "" for none
	users  int
}

// mirrorName names where the exporter's root is mirrored, for comparison and errors.
func (c *Config) mirrorName() string {
	oc, ok := c.objectStore()
	if !ok {
		return ""
	}
	return oc.URL + " (endpoint " + oc.Endpoint + ")"
}

// claimRoot records that the exporter uses its local root, or fails when a running exporter
// mirrors that root elsewhere. The returned release undoes the claim.
func (c *Config) claimRoot() (release func(), err error) {
	root := c.root()
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	mirror := c.mirrorName()
	rootsMu.Lock()
	defer rootsMu.Unlock()
	if u, used := roots[root]; used && u.mirror != mirror {
		return nil, fmt.Errorf("the local folder %s is already the dataset root of another replay_parquet exporter, mirrored to %s; this one mirrors it to %s, so each would upload the other's files: give each exporter its own local folder (local_directory with an s3:// directory)",
			root, orNone(u.mirror), orNone(mirror))
	}
	u := roots[root]
	u.mirror = mirror
	u.users++
	roots[root] = u
	var once sync.Once
	return func() {
		once.Do(func() {
			rootsMu.Lock()
			defer rootsMu.Unlock()
			if u := roots[root]; u.users <= 1 {
				delete(roots, root)
			} else {
				u.users--
				roots[root] = u
			}
		})
	}, nil
}

func orNone(mirror string) string {
	if mirror == "" {
		return "no object store"
	}
	return mirror
}
