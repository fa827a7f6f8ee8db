package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// Segments name the writer that staged them, and each writer holds a lock on its own owner file
// in staging for as long as its process lives (the kernel releases it when the process dies,
// kill -9 included). A segment whose owner's lock can be taken was left by a process that is
// gone, so it is adopted at once: a collector restarted after a crash merges its predecessor's
// segments at its first start, not staleAge (15 minutes) later, and the cases in them become
// visible then. Segments of a live owner, of a build that did not name owners, or on a system
// without file locks keep the age rule.

// ownerPrefix and ownerSuffix name a writer's owner file in staging: owner-<id>.lock.
const ownerPrefix, ownerSuffix = "owner-", ".lock"

// errNoFileLocks is what lockFile returns where the system has no advisory file locks
// (filelock_other.go): segments then keep the age rule alone.
var errNoFileLocks = errors.New("file locks are not supported here")

// ownerSep separates a segment's own id from its owner's in its name: segment-<id>_<owner>.
const ownerSep = "_"

// segmentOwner is this writer's owner file, locked while the writer lives; nil without locks.
type segmentOwner struct {
	id   string
	file *os.File
}

// newSegmentOwner creates and locks this writer's owner file. Where files cannot be locked it
// returns nil: segments are then named without an owner, and no other process could tell
// whether this one is alive.
func newSegmentOwner(staging string) (*segmentOwner, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(staging, ownerPrefix+id.String()+ownerSuffix), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		if errors.Is(err, errNoFileLocks) {
			return nil, nil
		}
		return nil, err
	}
	return &segmentOwner{id: id.String(), file: f}, nil
}

// segmentName names a new segment of this writer.
func (o *segmentOwner) segmentName(id uuid.UUID) string {
	if o == nil {
		return segmentPrefix + id.String()
	}
	return segmentPrefix + id.String() + ownerSep + o.id
}

// release unlocks the owner file; segments left in staging are then a successor's to adopt.
// With none left (left false) the file goes too.
func (o *segmentOwner) release(left bool) {
	if o == nil {
		return
	}
	if !left {
		os.Remove(o.file.Name())
	}
	o.file.Close()
}

// ownerOf is the owner a segment's name gives, or "" for a segment of a build that named none.
func ownerOf(segmentName string) string {
	_, owner, _ := strings.Cut(strings.TrimPrefix(segmentName, segmentPrefix), ownerSep)
	return owner
}

// goneOwners tells, for the owners it is asked about, whether their process is gone: their
// owner file exists and its lock can be taken. It keeps those locks (so that the owner file
// cannot be taken over meanwhile) until close, which removes the files of the gone owners.
type goneOwners struct {
	staging string
	checked map[string]*os.File // owner → its locked file when gone, nil when alive or unknown
}

func (g *goneOwners) gone(owner string) bool {
	if owner == "" {
		return false
	}
	if f, ok := g.checked[owner]; ok {
		return f != nil
	}
	f, err := os.OpenFile(filepath.Join(g.staging, ownerPrefix+owner+ownerSuffix), os.O_RDWR, 0)
	if err != nil { // no owner file: nothing tells whether its writer lives
		g.checked[owner] = nil
		return false
	}
	if lockFile(f) != nil { // alive (or no locks here)
		f.Close()
		g.checked[owner] = nil
		return false
	}
	g.checked[owner] = f
	return true
}

// close removes the owner files of the gone owners (their segments are adopted or claimed by
// another writer) and releases their locks.
func (g *goneOwners) close() {
	for _, f := range g.checked {
		if f != nil {
			os.Remove(f.Name())
			f.Close()
		}
	}
}
