package replayext

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// store is the replay index of a dataset root. Memory holds only the index: for each case its
// file and row, what listings filter on, and its recorded model calls by call-site id. Case
// content is read from the Parquet files on demand (one row at a time) and
// kept in a small LRU cache, so memory does not grow with what the cases hold. Each refresh
// indexes only the files published since the last one, so cases written by any collector into
// the same root become replayable.
//
// The index is laid out for size (about 110 bytes per case with one model call): ids as their
// 16 bytes, entries and steps in flat slices addressed by number, lookups by binary search in
// sorted slices of 8-byte id hashes (a hash match is confirmed on the full id), repeated
// strings interned.
type store struct {
	src   source
	cache *caseCache

	mu      sync.RWMutex
	files   []string    // data files indexed, by number
	entries []caseEntry // by number, in indexing order
	llms    []llmRef    // the cases' LLM steps; a case's are contiguous, in order
	ordered []int32     // entry numbers by start time, then case id
	byID    []idSlot    // by case id hash, then entry number
	byCall  []idSlot    // by call-site id hash, then entry number and position: recorded order
	// A refresh appends to byID and byCall; lookups see only their sorted beginnings, so a
	// case becomes visible when the refresh that indexed it sorts.
	sortedIDs, sortedCalls int
	fieldSets              [][]string // the distinct call-site field sets
	names                  []string   // interned agent names and statuses
	nameIDs                map[string]uint16
}

// idSlot is one entry of a sorted lookup slice: an id's hash, and where the id is.
type idSlot struct {
	hash  uint64
	entry int32
	pos   int32 // the position among the case's LLM steps (call-site lookups only)
}

// caseEntry is what the index keeps of one case.
type caseEntry struct {
	id       hexKey
	start    int64 // start time, Unix nanoseconds
	file     int32 // in store.files
	row      int32
	llmStart uint32 // its LLM steps are llms[llmStart : llmStart+llmCount]
	llmCount uint16
	agent    uint16 // in store.names
	status   uint16 // in store.names
}

func (s *store) llmOf(e *caseEntry) []llmRef {
	return s.llms[e.llmStart : e.llmStart+uint32(e.llmCount)]
}

// llmRef is one LLM step of a case: its call-site id, its index among the case's steps and
// its call-site field set.
type llmRef struct {
	id     hexKey
	step   int32
	fields uint16 // in store.fieldSets
}

// hexKey is a 32-hex-digit id (a case id, or a call-site id after its "cs_") as its 16 bytes.
type hexKey [16]byte

func parseHexKey(id string) (hexKey, bool) {
	var k hexKey
	if len(id) != 32 {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(id))
	return k, err == nil
}

func parseCallKey(id string) (hexKey, bool) {
	hexID, ok := strings.CutPrefix(id, "cs_")
	if !ok {
		return hexKey{}, false
	}
	return parseHexKey(hexID)
}

func (k hexKey) String() string { return hex.EncodeToString(k[:]) }

// hash is what the sorted lookup slices hold of an id: a seeded hash, so that ids sharing
// their first bytes (as crafted or sequential ids do) still spread evenly.
func (k hexKey) hash() uint64 { return maphash.Comparable(hashSeed, k) }

var hashSeed = maphash.MakeSeed()

// find returns the slots of index whose hash is key's, in index order.
func find(index []idSlot, key hexKey) []idSlot {
	h := key.hash()
	lo := sort.Search(len(index), func(i int) bool { return index[i].hash >= h })
	hi := lo
	for hi < len(index) && index[hi].hash == h {
		hi++
	}
	return index[lo:hi]
}

func sortSlots(index []idSlot) {
	slices.SortFunc(index, func(a, b idSlot) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		if c := cmp.Compare(a.entry, b.entry); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
}

// newStore indexes the dataset root at a local directory.
func newStore(root string, cacheSize int) *store { return newStoreOf(newLocalSource(root), cacheSize) }

func newStoreOf(src source, cacheSize int) *store {
	return &store{src: src, cache: newCaseCache(cacheSize), nameIDs: map[string]uint16{}}
}

// refresh forgets the cases of removed files and indexes the files published since the last
// refresh. It returns how many cases were added and dropped, and the files it could not read
// (they are retried on the next refresh).
func (s *store) refresh() (added, dropped int, failed map[string]error) {
	dropped = s.forgetRemoved()
	files, err := s.src.next()
	if err != nil {
		failed = map[string]error{"": err}
	}
	for _, f := range files {
		entries, err := s.src.readIndex(f)
		if err == nil {
			err = s.fillLegacyIDs(f, entries)
		}
		if err != nil {
			if failed == nil {
				failed = map[string]error{}
			}
			failed[f] = err
			s.src.retry(f)
			continue
		}
		added += s.add(f, entries)
	}
	if added > 0 {
		added -= s.sort()
	}
	return added, dropped, failed
}

// forgetRemoved drops the cases of indexed files that no longer exist (the exporter's retention
// deleted their partition, or an operator did), so that they are neither listed nor replayed,
// and returns how many it dropped. Their entries stay in s.entries (numbers must not move) but
// nothing addresses them any more.
func (s *store) forgetRemoved() (dropped int) {
	// Check the files without the lock (a stat, or a listing, per file): lookups go on meanwhile.
	s.mu.RLock()
	files := slices.Clone(s.files)
	s.mu.RUnlock()
	var removed []int
	for i, path := range files {
		if path != "" && s.src.removed(path) {
			removed = append(removed, i)
		}
	}
	if len(removed) == 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	gone := map[int32]bool{}
	for _, i := range removed {
		gone[int32(i)] = true
		s.files[i] = ""
	}
	dead := map[int32]bool{}
	for n := range s.entries {
		if gone[s.entries[n].file] {
			dead[int32(n)] = true
			s.cache.drop(s.entries[n].id.String())
		}
	}
	s.byID = slices.DeleteFunc(s.byID, func(x idSlot) bool { return dead[x.entry] })
	s.byCall = slices.DeleteFunc(s.byCall, func(x idSlot) bool { return dead[x.entry] })
	s.ordered = slices.DeleteFunc(s.ordered, func(n int32) bool { return dead[n] })
	s.sortedIDs, s.sortedCalls = len(s.byID), len(s.byCall)
	return len(dead)
}

// fillLegacyIDs computes the call-site ids of files written before they were recorded.
func (s *store) fillLegacyIDs(path string, entries []dataset.IndexEntry) error {
	for i := range entries {
		var c *replaycase.Case // read once per case, only when a step lacks its id
		for j, ref := range entries[i].LLMSteps {
			if ref.CallSiteID != "" {
				continue
			}
			if c == nil {
				var err error
				if c, err = s.src.readCase(path, entries[i].Row); err != nil {
					return err
				}
			}
			req := callsite.FromStep(&c.Steps[ref.Index])
			ref.CallSiteFields = req.RecordedFields()
			ref.CallSiteID = req.ID(ref.CallSiteFields)
			entries[i].LLMSteps[j] = ref
		}
	}
	return nil
}

// add indexes the cases of one file.
func (s *store) add(path string, entries []dataset.IndexEntry) (added int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	file := int32(len(s.files))
	s.files = append(s.files, path)
	for _, e := range entries {
		id, ok := parseHexKey(e.CaseID)
		if !ok {
			continue // not a case id the processor writes: nothing can address it
		}
		if _, dup := s.lookupCase(id); dup {
			continue // at-least-once delivery: the same case written twice (sort drops those within one refresh)
		}
		n := int32(len(s.entries))
		c := caseEntry{id: id, start: e.StartTime.UnixNano(), file: file, row: int32(e.Row), llmStart: uint32(len(s.llms)), agent: s.intern(e.AgentName), status: s.intern(string(e.Status))}
		for _, ref := range e.LLMSteps {
			key, ok := parseCallKey(ref.CallSiteID)
			if !ok {
				continue // not a call-site id this build computes: no live request can match it
			}
			s.llms = append(s.llms, llmRef{id: key, step: int32(ref.Index), fields: s.internFields(ref.CallSiteFields)})
			s.byCall = append(s.byCall, idSlot{key.hash(), n, int32(c.llmCount)})
			c.llmCount++
		}
		s.entries = append(s.entries, c)
		s.byID = append(s.byID, idSlot{hash: id.hash(), entry: n})
		s.ordered = append(s.ordered, n)
		added++
	}
	return added
}

// sort orders what the last refresh appended, drops the cases it indexed twice (at-least-
// once delivery within one refresh) and returns how many it dropped.
func (s *store) sort() (dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sortSlots(s.byID)
	twice := map[int32]bool{}
	kept := s.byID[:0]
	for i, slot := range s.byID {
		if i > 0 && kept[len(kept)-1].hash == slot.hash && s.sameCaseAmong(kept, slot) {
			twice[slot.entry] = true
			continue
		}
		kept = append(kept, slot)
	}
	s.byID = kept
	if len(twice) > 0 {
		s.byCall = slices.DeleteFunc(s.byCall, func(x idSlot) bool { return twice[x.entry] })
		s.ordered = slices.DeleteFunc(s.ordered, func(n int32) bool { return twice[n] })
	}
	sortSlots(s.byCall)
	slices.SortStableFunc(s.ordered, func(a, b int32) int {
		x, y := &s.entries[a], &s.entries[b]
		if x.start != y.start {
			return cmp.Compare(x.start, y.start)
		}
		return bytes.Compare(x.id[:], y.id[:])
	})
	s.sortedIDs, s.sortedCalls = len(s.byID), len(s.byCall)
	return len(twice)
}

// sameCaseAmong reports whether slot's case is already among the kept slots of its hash.
func (s *store) sameCaseAmong(kept []idSlot, slot idSlot) bool {
	id := s.entries[slot.entry].id
	for i := len(kept) - 1; i >= 0 && kept[i].hash == slot.hash; i-- {
		if s.entries[kept[i].entry].id == id {
			return true
		}
	}
	return false
}

// lookupCase finds a case's entry number. Caller holds mu.
func (s *store) lookupCase(id hexKey) (int32, bool) {
	for _, slot := range find(s.byID[:s.sortedIDs], id) {
		if s.entries[slot.entry].id == id {
			return slot.entry, true
		}
	}
	return 0, false
}

// intern returns the number of a repeated string (agent names, statuses). Caller holds mu.
func (s *store) intern(name string) uint16 {
	if n, ok := s.nameIDs[name]; ok {
		return n
	}
	if len(s.names) == math.MaxUint16 {
		return s.intern("") // more distinct agent names than an index entry counts: listed as none
	}
	s.names = append(s.names, name)
	s.nameIDs[name] = uint16(len(s.names) - 1)
	return uint16(len(s.names) - 1)
}

// internFields returns the number of a call-site field set. Caller holds mu.
func (s *store) internFields(fields []string) uint16 {
	for i, fs := range s.fieldSets {
		if slices.Equal(fs, fields) {
			return uint16(i)
		}
	}
	s.fieldSets = append(s.fieldSets, fields)
	return uint16(len(s.fieldSets) - 1)
}

// errNoCase is a case id the index does not hold.
var errNoCase = errors.New("no such case")

// entry finds a case's index entry. Caller holds mu.
func (s *store) entry(caseID string) (*caseEntry, bool) {
	id, ok := parseHexKey(caseID)
	if !ok {
		return nil, false
	}
	n, ok := s.lookupCase(id)
	if !ok {
		return nil, false
	}
	return &s.entries[n], true
}

// get reads a case's content (from the cache, else from its file).
func (s *store) get(id string) (*replaycase.Case, error) {
	if c, ok := s.cache.get(id); ok {
		return c, nil
	}
	s.mu.RLock()
	e, ok := s.entry(id)
	var path string
	var row int64
	if ok {
		path, row = s.files[e.file], int64(e.row)
	}
	s.mu.RUnlock()
	if !ok {
		return nil, errNoCase
	}
	c, err := s.src.readCase(path, row)
	if err != nil {
		return nil, fmt.Errorf("reading case %s: %w", id, err)
	}
	c.RawSpans, c.RawEvents = nil, nil // not served; keeps the cache to what replay needs
	s.cache.put(id, c)
	return c, nil
}

func (s *store) has(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.entry(id)
	return ok
}

// match returns the recorded LLM steps whose call-site id equals the request's, computed over
// each recorded field set; only steps of caseID when it is set.
// ids, when not nil, remembers the request's ids across calls.
func (s *store) match(req callsite.Request, caseID string, ids *callSiteIDs) (string, []hit) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, fields := range s.fieldSets {
		id := ids.of(req, i, fields)
		if hits := s.occurrences(id, caseID); len(hits) > 0 {
			return id, hits
		}
	}
	return "", nil
}

// occurrences lists the recorded steps of a call-site id, only of caseID when it is set.
// Caller holds mu.
func (s *store) occurrences(id, caseID string) []hit {
	key, ok := parseCallKey(id)
	if !ok {
		return nil
	}
	var hits []hit
	for _, slot := range find(s.byCall[:s.sortedCalls], key) {
		e := &s.entries[slot.entry]
		if s.llmOf(e)[slot.pos].id != key {
			continue // another id with the same hash
		}
		if cid := e.id.String(); caseID == "" || cid == caseID {
			hits = append(hits, hit{cid, int(slot.pos)})
		}
	}
	return hits
}

// llmCount is how many LLM steps the case recorded.
func (s *store) llmCount(caseID string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.entry(caseID); ok {
		return int(e.llmCount)
	}
	return 0
}

// llmStep reads the h.pos-th LLM step of case h.caseID.
func (s *store) llmStep(h hit) (*replaycase.Step, error) {
	s.mu.RLock()
	e, ok := s.entry(h.caseID)
	ok = ok && h.pos < int(e.llmCount)
	var step int32
	if ok {
		step = s.llmOf(e)[h.pos].step
	}
	s.mu.RUnlock()
	if !ok {
		return nil, errNoCase
	}
	c, err := s.get(h.caseID)
	if err != nil {
		return nil, err
	}
	return &c.Steps[step], nil
}

// callSiteID names the h.pos-th LLM step of case h.caseID, from the index.
func (s *store) callSiteID(h hit) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.entry(h.caseID); ok && h.pos < int(e.llmCount) {
		return "cs_" + s.llmOf(e)[h.pos].id.String()
	}
	return ""
}

// firstCase is the first case in start order ("" when there is none).
func (s *store) firstCase() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.ordered) == 0 {
		return ""
	}
	return s.entries[s.ordered[0]].id.String()
}

// caseFilter selects cases for a listing; zero fields select everything.
type caseFilter struct {
	status, agent string
	since, until  time.Time
}

// list returns the ids of the cases that pass f, in start order.
func (s *store) list(f caseFilter) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, n := range s.ordered {
		c := &s.entries[n]
		start := time.Unix(0, c.start)
		if (f.status == "" || s.names[c.status] == f.status) && (f.agent == "" || s.names[c.agent] == f.agent) &&
			(f.since.IsZero() || !start.Before(f.since)) && (f.until.IsZero() || start.Before(f.until)) {
			out = append(out, c.id.String())
		}
	}
	return out
}

// callsFor lists every recorded occurrence of a call-site id.
func (s *store) callsFor(id string) []hit {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.occurrences(id, "")
}
