package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Segments name the writer that staged them, and each writer holds a lock on its own owner file
// in staging for as long as its process lives (the kernel releases it when the process dies,
// kill -9 included). A segment whose owner's lock can be taken was left by a process that is
// gone, so it is adopted at once: a collector restarted after a crash merges its predecessor's
// segments at its first start, not staleAge (15 minutes) later, and the cases in them become
// visible then. A segment whose owner's lock is held is never adopted, however old: its owner
// lives and merges it itself, and a second writer merging it at the same time would publish
// its rows twice. Segments of a build that did not name owners, or on a system without file
// locks, keep the age rule.

// ownerPrefix and ownerSuffix name a writer's owner file in staging: owner-<id>.lock.
const ownerPrefix, ownerSuffix = "owner-", ".lock"

// ownerFileGrace is how old an unlocked owner file must be before it counts as a gone writer's.
// A writer locks its owner file right after creating it (newSegmentOwner); younger, it may be
// one that is starting and has not locked it yet.
const ownerFileGrace = time.Minute

// errNoFileLocks is what lockFile returns where the system has no advisory file locks
// (filelock_other.go): segments then keep the age rule alone.
var errNoFileLocks = errors.New("file locks are not supported here")

// errLocked is what lockFile returns while another open file holds the lock.
var errLocked = errors.New("locked by another open file")

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

// ownerFileOf is the owner an owner file's name gives; ok is false for any other entry.
func ownerFileOf(name string) (owner string, ok bool) {
	owner, ok = strings.CutPrefix(name, ownerPrefix)
	if !ok {
		return "", false
	}
	return strings.CutSuffix(owner, ownerSuffix)
}

// checkOwnerFile looks at an owner file that no segment may name: a writer killed while staging
// held none of its segments (during its start, or idle after its last merge) left only that
// file. Once older than ownerFileGrace, its state is checked, so that close removes it when
// its writer is gone; without this each such crash left an owner file in staging for good.
func (g *goneOwners) checkOwnerFile(entry os.DirEntry, now time.Time) {
	owner, ok := ownerFileOf(entry.Name())
	if !ok {
		return
	}
	if info, err := entry.Info(); err == nil && info.ModTime().Before(now.Add(-ownerFileGrace)) {
		g.state(owner)
	}
}

// ownerState is what an owner's lock tells of its process.
type ownerState int

const (
	ownerUnknown ownerState = iota // no owner named, no owner file, or no file locks here
	ownerAlive                     // its lock is held
	ownerGone                      // its lock could be taken
)

// goneOwners tells, for the owners it is asked about, whether their process is alive or gone.
// It keeps the locks of the gone ones (so that an owner file cannot be taken over meanwhile)
// until close, which removes their files.
type goneOwners struct {
	staging string
	checked map[string]checkedOwner
}

type checkedOwner struct {
	state ownerState
	file  *os.File // locked, when gone
}

func (g *goneOwners) state(owner string) ownerState {
	if owner == "" {
		return ownerUnknown
	}
	if c, ok := g.checked[owner]; ok {
		return c.state
	}
	c := checkedOwner{state: ownerUnknown}
	f, err := os.OpenFile(filepath.Join(g.staging, ownerPrefix+owner+ownerSuffix), os.O_RDWR, 0)
	if err == nil { // without an owner file nothing tells whether its writer lives
		switch err := lockFile(f); {
		case err == nil:
			c = checkedOwner{state: ownerGone, file: f}
		case errors.Is(err, errLocked):
			c.state = ownerAlive
		}
		if c.file == nil {
			f.Close()
		}
	}
	g.checked[owner] = c
	return c.state
}

// close removes the owner files of the gone owners (their segments are adopted or claimed by
// another writer) and releases their locks.
func (g *goneOwners) close() {
	for _, c := range g.checked {
		if c.file != nil {
			os.Remove(c.file.Name())
			c.file.Close()
		}
	}
}
