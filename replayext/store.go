package replayext

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
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
// The index is laid out for size, 64 bytes per case with one model call: ids as their 16
// bytes, cases and model calls as fixed-size records outside the Go heap (records.go), and
// three sorted slices of record numbers to look them up by case id, by call-site id and in
// start order. Agent names, statuses and call-site field sets are interned.
type store struct {
	src   source
	cache *caseCache
	// generation names this index, at random: the numbers of its records are its own (a
	// restart, or another replica, numbers the same cases again), and a next_page_token that
	// holds one says which index it is for (callToken).
	generation uint64

	// refreshing serializes refreshes: only a refresh writes the index, so it reads the index
	// without mu and takes mu only to change it.
	refreshing sync.Mutex

	mu    sync.RWMutex
	files []string // data files indexed, by number; "" once removed
	// fileStarts is, per file, the position of its row 0 (positions number the rows of every
	// file indexed, one after the other); nextPos is the position of the next file's row 0.
	fileStarts []uint32
	nextPos    uint32
	entries    *records[caseEntry]
	summaryOf  *records[uint16] // per entry, its number in summaries
	llms       *records[llmRef] // the cases' LLM steps; a case's are contiguous, in order
	look       *lookups         // the sorted slices that find cases and calls
	fieldSets  [][]string       // the distinct call-site field sets
	summaries  summaryTable
	// stale are entries that later rows of their cases replaced, still in the lookups when the
	// memory to take them out was refused (a lookup by id finds the earlier row first). Only
	// the refresh reads it.
	stale []uint32
	// failing are the files (and "", the listing) whose last read failed in a way that may
	// pass: a refresh reports such a failure once, and the read that succeeds after it, not
	// each retry. Only the refresh reads it.
	failing map[string]bool
}

// caseEntry is what the index keeps of one case: 32 bytes, and its summary number (2 bytes,
// in store.summaryOf: beside the entry it would round the entry up to 40). Its LLM steps are
// llms[llmStart:] up to the next entry's llmStart (entries and their steps are appended
// together).
type caseEntry struct {
	id       hexKey
	start    int64  // start time, Unix nanoseconds
	pos      uint32 // its file and row, as a position (see store.fileStarts); noPos for a case indexed twice
	llmStart uint32
}

// noPos marks an entry that nothing addresses: a copy of a case whose later row a refresh
// indexed at the same time (see later).
const noPos = math.MaxUint32

// locate is the file (in store.files) and row of entry n; false for a case indexed twice.
// Caller holds mu (or is the refresh).
func (s *store) locate(n uint32) (file int, row int64, ok bool) {
	pos := s.entries.at(n).pos
	if pos == noPos {
		return 0, 0, false
	}
	file = s.fileOf(pos)
	return file, int64(pos - s.fileStarts[file]), true
}

// fileOf is the file (in store.files) of the row at position pos. Caller holds mu (or is the
// refresh).
func (s *store) fileOf(pos uint32) int {
	return sort.Search(len(s.fileStarts), func(i int) bool { return s.fileStarts[i] > pos }) - 1
}

// summary is what listings filter on besides the start time: few distinct values, numbered.
type summary struct{ agent, status string }

// summaryTable numbers distinct summaries; number 0 is the empty one.
type summaryTable struct {
	values []summary
	ids    map[summary]uint16
}

func newSummaryTable() summaryTable {
	return summaryTable{values: []summary{{}}, ids: map[summary]uint16{{}: 0}}
}

// number returns the number of sum, numbering it if it is new. Past 65,535 distinct values a
// new one gets 0: listed with no agent name and status.
func (t *summaryTable) number(sum summary) uint16 {
	if n, ok := t.ids[sum]; ok {
		return n
	}
	if len(t.values) == math.MaxUint16 {
		return 0
	}
	sum = summary{strings.Clone(sum.agent), strings.Clone(sum.status)} // the decoder reuses its buffers
	t.values = append(t.values, sum)
	t.ids[sum] = uint16(len(t.values) - 1)
	return uint16(len(t.values) - 1)
}

// llmRef is one LLM step of a case (18 bytes): its call-site id and its call-site field set.
// Every LLM step of a case has one, in order, so the n-th of a case's llmRefs is its n-th LLM
// step. Its case is not stored: the entries' llmStart numbers find it (entryOfLLM), six bytes
// per model call less.
type llmRef struct {
	id     hexKey
	fields uint16 // in store.fieldSets; noFields when the id is not one this build computes
}

// noFields marks a recorded call-site id this build does not compute: no live request can
// match it, so no lookup finds it.
const noFields = math.MaxUint16

// llmRange is where entry n's LLM steps are in llms. Caller holds mu (or is the refresh).
func (s *store) llmRange(n uint32) (from, to uint32) {
	from, to = s.entries.at(n).llmStart, uint32(s.llms.len())
	if int(n)+1 < s.entries.len() {
		to = s.entries.at(n + 1).llmStart
	}
	return from, to
}

// entryOfLLM is the entry whose LLM steps include llm number l: the last entry whose steps
// start at or before l (entries are numbered in the order their steps are). Caller holds mu
// (or is the refresh).
func (s *store) entryOfLLM(l uint32) uint32 {
	return uint32(sort.Search(s.entries.len(), func(n int) bool { return s.entries.at(uint32(n)).llmStart > l }) - 1)
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

func parseCallKey[S string | []byte](id S) (hexKey, bool) {
	var k hexKey
	if len(id) != 3+2*len(k) || string(id[:3]) != "cs_" {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(id[3:]))
	return k, err == nil
}

func (k hexKey) String() string { return hex.EncodeToString(k[:]) }

// prefix is the key's first 8 bytes as a number, which orders keys as their bytes do except
// for ties: a sort compares numbers, and looks at the rest only on a tie.
func (k hexKey) prefix() uint64 { return binary.BigEndian.Uint64(k[:8]) }

func compareKeys(a, b hexKey) int { return bytes.Compare(a[:], b[:]) }

// newStore indexes the dataset root at a local directory.
func newStore(root string, cacheSize int) *store { return newStoreOf(newLocalSource(root), cacheSize) }

func newStoreOf(src source, cacheSize int) *store {
	s := &store{src: src, cache: newCaseCache(cacheSize), generation: rand.Uint64(), entries: newRecords[caseEntry](), summaryOf: newRecords[uint16](), llms: newRecords[llmRef](), look: newLookups(), summaries: newSummaryTable(), failing: map[string]bool{}}
	runtime.AddCleanup(s, (*lookups).free, s.look)
	return s
}

// refreshed is what a refresh did.
type refreshed struct {
	added, dropped int
	// superseded is how many cases of the index a later copy replaced (a re-drive): what was
	// derived from their old rows is stale.
	superseded int
	// failed are the files it could not read for a reason that may pass (the disk, a
	// permission, the network), and "" when it could not list them: retried on every refresh,
	// and reported by the first refresh that fails to read them (s.failing).
	failed map[string]error
	// read are the files in failed of an earlier refresh that this one read (or listed).
	read []string
	// unreadable are the files whose bytes are not a data file this build reads
	// (dataset.ErrUnreadable): set aside, not read again by this process.
	unreadable map[string]error
	// skipped are the rows of the files indexed that no case id can address, by file and
	// reason.
	skipped []skippedRows
	// err is the system refusing memory for the index: the cases not yet published stay
	// out of it and their files are retried on the next refresh.
	err error
}

// refresh forgets the cases of removed files and indexes the files published since the last
// refresh. Once ctx ends (its deadline: the object store is not answering; or the extension
// stops), the files not read yet are left to the next refresh.
func (s *store) refresh(ctx context.Context) (r refreshed) {
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	if r.dropped, r.err = s.forgetRemoved(); r.err != nil {
		return r
	}
	r.dropped += s.dropStale()
	files, err := s.src.next(ctx)
	s.noteRead(ctx, &r, "", err)
	// The files read since the last publish: their cases (fresh), their numbers in s.files and
	// their rows left out, counted once their cases are published (else the files are read
	// again on the next refresh, and their rows counted then).
	var fresh freshEntries
	var batch []int
	var batchSkipped []skippedRows
	publish := func() error {
		added, err := s.publish(fresh)
		if err != nil {
			return err
		}
		r.added += added
		r.superseded += len(fresh.superseded)
		s.stale = append(s.stale, fresh.superseded...)
		r.dropped += s.dropStale()
		r.skipped = append(r.skipped, batchSkipped...)
		for _, i := range batch {
			s.noteRead(ctx, &r, s.files[i], nil)
		}
		fresh, batch, batchSkipped = freshEntries{fresh.cases[:0], fresh.calls[:0], fresh.superseded[:0]}, batch[:0], batchSkipped[:0]
		return nil
	}
	fi := &fileIndex{} // reused from file to file
	for i, f := range files {
		if ctx.Err() != nil { // each file would fail the same way: read them next time
			for _, f := range files[i:] {
				s.src.retry(f)
			}
			break
		}
		err := s.readFile(ctx, f, fi)
		if err != nil {
			if !s.setAside(&r, f, err) {
				s.src.retry(f)
				s.noteRead(ctx, &r, f, err)
			}
			continue
		}
		if r.err = s.add(f, fi, &fresh); r.err != nil {
			s.src.retry(f) // nothing of it was added
		} else {
			batch, batchSkipped = append(batch, len(s.files)-1), append(batchSkipped, fi.skipped...)
			if len(fresh.cases) >= publishEvery {
				r.err = publish()
			}
		}
		if r.err != nil {
			for _, f := range files[i+1:] {
				s.src.retry(f)
			}
			break
		}
	}
	if r.err == nil {
		r.err = publish()
	}
	if r.err != nil {
		s.unindex(batch)
	}
	return r
}

// unindex forgets files whose cases could not be published, and has them read again on the
// next refresh. Their records stay (numbers must not move) but nothing addresses them.
func (s *store) unindex(files []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range files {
		s.src.retry(s.files[i])
		s.files[i] = ""
	}
}

// publishEvery is how many cases a refresh indexes before it publishes them: what it holds
// unsorted stays small, and each merge copies the lookup slices once (ten times for a million
// cases at start-up).
const publishEvery = 100_000

// forgetRemoved drops the cases of indexed files that no longer exist (the exporter's retention
// deleted their partition, or an operator did), so that they are neither listed nor replayed,
// and returns how many it dropped. Their entries stay in s.entries (numbers must not move) but
// nothing addresses them any more. Caller is the refresh.
func (s *store) forgetRemoved() (dropped int, err error) {
	// Check the files without the lock (a stat, or a listing, per file): lookups go on meanwhile.
	var removed []int
	for i, path := range s.files {
		if path != "" && s.src.removed(path) {
			removed = append(removed, i)
		}
	}
	if len(removed) == 0 {
		return 0, nil
	}
	gone := make([]bool, len(s.files))
	for _, i := range removed {
		gone[i] = true
	}
	if dropped, err = s.dropEntries(func(n uint32) bool { f, _, ok := s.locate(n); return ok && gone[f] }); err != nil {
		return 0, err // the files are checked again on the next refresh
	}
	s.mu.Lock()
	for _, i := range removed {
		s.files[i] = ""
	}
	s.mu.Unlock()
	return dropped, nil
}

// dropStale takes the stale entries out of the lookups and returns how many it dropped. When
// the memory for that is refused they stay, and the next refresh tries again.
func (s *store) dropStale() int {
	if len(s.stale) == 0 {
		return 0
	}
	stale := make(map[uint32]bool, len(s.stale))
	for _, n := range s.stale {
		stale[n] = true
	}
	dropped, err := s.dropEntries(func(n uint32) bool { return stale[n] })
	if err != nil {
		return 0
	}
	s.stale = s.stale[:0]
	return dropped
}

// dropEntries takes the entries dead names out of the lookups, so that no lookup finds them,
// forgets their cached content and returns how many it dropped. Their records stay (numbers
// must not move). Caller is the refresh.
func (s *store) dropEntries(dead func(n uint32) bool) (dropped int, err error) {
	old := *s.look
	var kept lookups
	for _, k := range []struct {
		dst  *[]uint32
		from []uint32
		dead func(uint32) bool
	}{
		{&kept.byID, old.byID, dead},
		{&kept.byCall, old.byCall, func(l uint32) bool { return dead(s.entryOfLLM(l)) }},
		{&kept.ordered, old.ordered, dead},
	} {
		if *k.dst, err = without(k.from, k.dead); err != nil {
			kept.free()
			return 0, err
		}
	}
	s.mu.Lock()
	*s.look = kept
	s.mu.Unlock()
	for _, n := range old.byID {
		if dead(n) {
			s.cache.Remove(s.entries.at(n).id)
		}
	}
	old.free() // no lookup reads it: they read under the lock, and see the new slices
	return len(old.byID) - len(kept.byID), nil
}

// fileIndex is what one data file adds to the index, read before it is added (a file that
// fails part way adds nothing). Its entries' pos is their row, their summary and llmStart and
// its steps' fields are numbers within the fileIndex.
type fileIndex struct {
	entries   []caseEntry
	summaryOf []uint16 // per entry
	rows      int64    // the file's rows, those left out included
	llms      []llmRef
	summaries summaryTable
	fieldSets [][]string
	skipped   []skippedRows // by reason
}

// skippedRows are rows of one file that the index leaves out for one reason: the first of
// them, for the log, and how many.
type skippedRows struct {
	file, reason string
	firstRow     int64
	count        int
}

// Why a row is left out of the index: its case id is not the 32 lowercase or uppercase hex
// digits the processor writes, so no request can name it.
const (
	skipCaseIDLength = "case_id_length"  // not 32 characters
	skipCaseIDNotHex = "case_id_not_hex" // 32 characters, not all hex digits
)

// skip counts row as left out of the index for reason.
func (fi *fileIndex) skip(file, reason string, row int64) {
	for i := range fi.skipped {
		if fi.skipped[i].reason == reason {
			fi.skipped[i].count++
			return
		}
	}
	fi.skipped = append(fi.skipped, skippedRows{file: file, reason: reason, firstRow: row, count: 1})
}

// readFile reads the index of one data file; call-site ids of files written before they were
// recorded are computed from the steps.
func (s *store) readFile(ctx context.Context, path string, fi *fileIndex) error {
	*fi = fileIndex{entries: fi.entries[:0], summaryOf: fi.summaryOf[:0], llms: fi.llms[:0], summaries: newSummaryTable(), skipped: fi.skipped[:0:0]}
	var last struct { // the previous row's summary: rows of a file mostly share it
		agent, status []byte
		n             uint16
	}
	return s.src.scanIndex(ctx, path, func(row int64, r *dataset.ReplayIndexRow) error {
		fi.rows = row + 1
		var id hexKey
		if len(r.CaseID) != 2*len(id) {
			fi.skip(path, skipCaseIDLength, row) // not a case id the processor writes
			return nil
		}
		if _, err := hex.Decode(id[:], r.CaseID); err != nil {
			fi.skip(path, skipCaseIDNotHex, row)
			return nil
		}
		if row == 0 || !bytes.Equal(last.agent, r.AgentName) || !bytes.Equal(last.status, r.Status) {
			last.agent, last.status = append(last.agent[:0], r.AgentName...), append(last.status[:0], r.Status...)
			last.n = fi.summaries.number(summary{string(r.AgentName), string(r.Status)})
		}
		e := caseEntry{id: id, start: r.StartTime, pos: uint32(row), llmStart: uint32(len(fi.llms))}
		var c *replaycase.Case // read once per case, only when a step lacks its id
		for i, st := range r.Steps {
			if replaycase.StepKind(st.Kind) != replaycase.StepLLM {
				continue
			}
			key, ok := parseCallKey(st.CallSiteID)
			fields := internFields(fi, st.CallSiteFields)
			if len(st.CallSiteID) == 0 {
				if c == nil {
					var err error
					if c, err = s.src.readCase(ctx, path, row); err != nil {
						return err
					}
				}
				if i >= len(c.Steps) {
					return fmt.Errorf("row %d: step %d of %d", row, i, len(c.Steps))
				}
				// A step without an id was written before ids existed, so before version 2:
				// its id is of version 1 (the fields without the version marker), as the
				// datasets of its time matched live requests.
				req := callsite.FromStep(&c.Steps[i])
				recorded := slices.DeleteFunc(req.RecordedFields(), func(f string) bool { return f == callsite.FieldV2 })
				key, ok = parseCallKey([]byte(req.ID(recorded)))
				fields = internFields(fi, recorded)
			}
			if !ok {
				fields = noFields
			}
			fi.llms = append(fi.llms, llmRef{id: key, fields: fields})
		}
		fi.entries = append(fi.entries, e)
		fi.summaryOf = append(fi.summaryOf, last.n)
		return nil
	})
}

// internFields returns the number of a field set within the file. The set comes as the
// index's bytes or as the names a step's recorded fields give.
func internFields[S string | []byte](fi *fileIndex, fields []S) uint16 {
	for i := len(fi.fieldSets) - 1; i >= 0; i-- {
		if slices.EqualFunc(fi.fieldSets[i], fields, func(a string, b S) bool { return a == string(b) }) {
			return uint16(i)
		}
	}
	set := make([]string, len(fields))
	for i, f := range fields {
		set[i] = string(f)
	}
	fi.fieldSets = append(fi.fieldSets, set)
	return uint16(len(fi.fieldSets) - 1)
}

// freshEntries are the entry and llm numbers a refresh added: not yet visible to lookups; and
// superseded, the visible entries that fresh copies of their cases replace.
type freshEntries struct{ cases, calls, superseded []uint32 }

// later reports whether the row at position a is a later row of a case than the row at b:
// its file's name sorts after b's (names are UUIDv7, so in creation order; a re-drive writes
// a case again in a new file), or it is later in the same file. A case's last row is its
// current one, as `reprise ls`, `show`, `diff` and `ci` read it. Caller holds mu (or is the
// refresh).
func (s *store) later(a, b uint32) bool {
	fa, fb := s.fileOf(a), s.fileOf(b)
	if na, nb := filepath.Base(s.files[fa]), filepath.Base(s.files[fb]); na != nb {
		return na > nb
	}
	return a > b
}

// add appends the cases of one file to the records, except those already visible in a later
// row (at-least-once delivery: the same case written twice; publish drops those within one
// refresh). A case visible in an earlier row (a re-drive) is added, and its old entry noted in
// fresh.superseded. It adds all of them or, when the records cannot grow, none.
func (s *store) add(path string, fi *fileIndex, fresh *freshEntries) error {
	if fi.rows > int64(noPos-s.nextPos) {
		return fmt.Errorf("%w: more than %d rows", errIndexFull, uint32(noPos))
	}
	// Under the lock: reserve may append to a records' chunk list, which lookups index.
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.entries.reserve(len(fi.entries)); err != nil {
		return err
	}
	if err := s.summaryOf.reserve(len(fi.entries)); err != nil {
		return err
	}
	if err := s.llms.reserve(len(fi.llms)); err != nil {
		return err
	}
	s.files = append(s.files, path)
	s.fileStarts = append(s.fileStarts, s.nextPos)
	first := s.nextPos
	s.nextPos += uint32(fi.rows)
	summaries := make([]uint16, len(fi.summaries.values))
	for i, sum := range fi.summaries.values {
		summaries[i] = s.summaries.number(sum)
	}
	fields := make([]uint16, len(fi.fieldSets))
	for i, fs := range fi.fieldSets {
		fields[i] = s.internFields(fs)
	}
	for i, e := range fi.entries {
		if old, dup := s.lookupCase(e.id); dup {
			if !s.later(first+e.pos, s.entries.at(old).pos) {
				continue
			}
			fresh.superseded = append(fresh.superseded, old)
		}
		end := uint32(len(fi.llms))
		if i+1 < len(fi.entries) {
			end = fi.entries[i+1].llmStart
		}
		steps := fi.llms[e.llmStart:end]
		e.pos, e.llmStart = first+e.pos, uint32(s.llms.len())
		n := s.entries.add(e)
		s.summaryOf.add(summaries[fi.summaryOf[i]])
		fresh.cases = append(fresh.cases, n)
		for _, l := range steps {
			if l.fields == noFields {
				s.llms.add(l) // keeps the step's position; no lookup finds it
				continue
			}
			l.fields = fields[l.fields]
			fresh.calls = append(fresh.calls, s.llms.add(l))
		}
	}
	return nil
}

// publish makes the cases a refresh added visible: it drops those added twice, merges the rest
// into the sorted slices and returns how many it kept. When a merged slice cannot be
// allocated, none of them stays visible.
func (s *store) publish(fresh freshEntries) (added int, err error) {
	if len(fresh.cases) == 0 {
		return 0, nil
	}
	// Records are numbered in the order they are added: the fresh ones come after the others.
	firstEntry, firstCall := fresh.cases[0], uint32(math.MaxUint32)
	if len(fresh.calls) > 0 {
		firstCall = fresh.calls[0]
	}
	byID := func(a, b uint32) int {
		if c := compareKeys(s.entries.at(a).id, s.entries.at(b).id); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	sortBy(fresh.cases, func(n uint32) uint64 { return s.entries.at(n).id.prefix() }, byID)
	cases := fresh.cases[:0]
	for _, n := range fresh.cases {
		if k := len(cases) - 1; k >= 0 && s.entries.at(cases[k]).id == s.entries.at(n).id {
			if s.later(s.entries.at(n).pos, s.entries.at(cases[k]).pos) { // the case's current row is kept
				cases[k], n = n, cases[k]
			}
			s.entries.at(n).pos = noPos // not visible yet: nothing else reads it
			continue
		}
		cases = append(cases, n)
	}
	// The calls of the copies dropped go too. fresh.calls ascend, and so do their entries,
	// numbered from firstEntry: one walk beside them finds each call's entry.
	calls, n := fresh.calls[:0], firstEntry
	for _, l := range fresh.calls {
		for int(n)+1 < s.entries.len() && s.entries.at(n+1).llmStart <= l {
			n++
		}
		if s.entries.at(n).pos != noPos {
			calls = append(calls, l)
		}
	}
	byCall := func(a, b uint32) int {
		if c := compareKeys(s.llms.at(a).id, s.llms.at(b).id); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	sortBy(calls, func(l uint32) uint64 { return s.llms.at(l).id.prefix() }, byCall)
	byStart := func(a, b uint32) int {
		if c := cmp.Compare(s.entries.at(a).start, s.entries.at(b).start); c != 0 {
			return c
		}
		return byID(a, b)
	}
	starts := slices.Clone(cases)
	sortBy(starts, func(n uint32) uint64 { return uint64(s.entries.at(n).start) ^ 1<<63 }, byStart)

	// One slice at a time, so that only one old slice is held beside its replacement; a case
	// may be found by id a moment before its calls are.
	merges := []struct {
		dst     *[]uint32
		fresh   []uint32
		compare func(a, b uint32) int
		first   uint32 // the first fresh number
	}{{&s.look.byID, cases, byID, firstEntry}, {&s.look.byCall, calls, byCall, firstCall}, {&s.look.ordered, starts, byStart, firstEntry}}
	for i, m := range merges {
		merged, err := merge(*m.dst, m.fresh, m.compare)
		if err != nil {
			s.mu.Lock()
			for _, done := range merges[:i] { // in place: no memory needed to take them back
				*done.dst = slices.DeleteFunc(*done.dst, func(n uint32) bool { return n >= done.first })
			}
			s.mu.Unlock()
			return 0, err
		}
		old := *m.dst
		s.mu.Lock()
		*m.dst = merged
		s.mu.Unlock()
		freeNumbers(old) // no lookup reads it: they read under the lock, and see the new slice
	}
	return len(cases), nil
}

// lookupCase finds a case's entry number. Caller holds mu.
func (s *store) lookupCase(id hexKey) (uint32, bool) {
	i := sort.Search(len(s.look.byID), func(i int) bool { return compareKeys(s.entries.at(s.look.byID[i]).id, id) >= 0 })
	if i < len(s.look.byID) && s.entries.at(s.look.byID[i]).id == id {
		return s.look.byID[i], true
	}
	return 0, false
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

// errNoCase is a case id the index does not hold, or no longer holds: retention removed its
// file after the request found it.
var errNoCase = errors.New("no case")

// errNotACaseID marks an errNoCase whose id is not 32 hex digits, such as a prefix, which
// reprise's commands accept and a base URL does not: its answer says so (caseError).
var errNotACaseID = errors.New("not 32 hex digits")

// noCase is errNoCase naming the id asked for.
func noCase(id string) error {
	if _, ok := parseHexKey(id); !ok {
		return fmt.Errorf("%w %s: %w", errNoCase, strconv.Quote(id), errNotACaseID)
	}
	return fmt.Errorf("%w %s", errNoCase, strconv.Quote(id))
}

// entry finds a case's entry number. Caller holds mu.
func (s *store) entry(caseID string) (uint32, bool) {
	id, ok := parseHexKey(caseID)
	if !ok {
		return 0, false
	}
	return s.lookupCase(id)
}

// caseFile is the data file and row of a case. Caller holds mu.
func (s *store) caseFile(id hexKey) (path string, row int64, ok bool) {
	n, ok := s.lookupCase(id)
	if !ok {
		return "", 0, false
	}
	file, row, ok := s.locate(n)
	if !ok {
		return "", 0, false
	}
	return s.files[file], row, true
}

// get reads a case's content (from the cache, else from its file). The cache is keyed by the
// id's 16 bytes, not its spelling: an id in upper-case hex names the same case, and a case
// that retention removes leaves the cache under every spelling.
func (s *store) get(ctx context.Context, id string) (*replaycase.Case, error) {
	key, ok := parseHexKey(id)
	if !ok {
		return nil, noCase(id)
	}
	if c, ok := s.cache.Get(key); ok {
		return c, nil
	}
	s.mu.RLock()
	path, row, ok := s.caseFile(key)
	s.mu.RUnlock()
	if !ok {
		return nil, noCase(id)
	}
	c, err := s.src.readCase(ctx, path, row)
	if errors.Is(err, fs.ErrNotExist) { // retention deleted the file; the next refresh forgets its cases
		return nil, noCase(id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading case %s: %w", id, err)
	}
	c.RawSpans, c.RawEvents = nil, nil // not served; keeps the cache to what replay needs
	s.cache.Add(key, c)
	return c, nil
}

func (s *store) has(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.entry(id)
	return ok
}

// match returns the recorded LLM steps whose call-site id equals the request's, computed over
// each recorded field set: those of caseID when it is set; when it is not, only the first of
// every case's (which of them answer is the session's choice: followed).
// ids, when not nil, remembers the request's ids across calls.
func (s *store) match(req callsite.Request, caseID string, ids *callSiteIDs) (string, []hit) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, fields := range s.fieldSets {
		id := ids.of(req, i, fields)
		if caseID != "" {
			if hits := s.occurrencesIn(id, caseID); len(hits) > 0 {
				return id, hits
			}
		} else if lo, hi := s.callRun(id); lo < hi {
			return id, s.hitsOf(lo, lo+1)
		}
	}
	return "", nil
}

// callRun is where the steps of call-site id are in byCall: [lo, hi), empty for an id that is
// no call-site id. Caller holds mu.
func (s *store) callRun(id string) (lo, hi int) {
	key, ok := parseCallKey(id)
	if !ok {
		return 0, 0
	}
	by := s.look.byCall
	lo = sort.Search(len(by), func(i int) bool { return compareKeys(s.llms.at(by[i]).id, key) >= 0 })
	hi = lo + sort.Search(len(by)-lo, func(i int) bool { return compareKeys(s.llms.at(by[lo+i]).id, key) > 0 })
	return lo, hi
}

// hitsOf are the steps byCall[lo:hi]. Caller holds mu.
func (s *store) hitsOf(lo, hi int) []hit {
	hits := make([]hit, 0, hi-lo)
	for _, l := range s.look.byCall[lo:hi] {
		e := s.entries.at(s.entryOfLLM(l))
		hits = append(hits, hit{e.id.String(), int(l - e.llmStart)})
	}
	return hits
}

// occurrencesIn lists the recorded steps of call-site id in one case. byCall orders a key's
// steps by number and a case's steps are numbered together, so one search finds the first of
// the case's: a key recorded in many cases costs no more than one recorded once. Caller holds
// mu.
func (s *store) occurrencesIn(id, caseID string) []hit {
	key, ok := parseCallKey(id)
	if !ok {
		return nil
	}
	n, ok := s.entry(caseID)
	if !ok {
		return nil
	}
	from, to := s.llmRange(n)
	name := s.entries.at(n).id.String()
	var hits []hit
	i := sort.Search(len(s.look.byCall), func(i int) bool {
		l := s.look.byCall[i]
		c := compareKeys(s.llms.at(l).id, key)
		return c > 0 || c == 0 && l >= from
	})
	for ; i < len(s.look.byCall) && s.look.byCall[i] < to && s.llms.at(s.look.byCall[i]).id == key; i++ {
		hits = append(hits, hit{name, int(s.look.byCall[i] - from)})
	}
	return hits
}

// llmCount is how many LLM steps the case recorded.
func (s *store) llmCount(caseID string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if n, ok := s.entry(caseID); ok {
		from, to := s.llmRange(n)
		return int(to - from)
	}
	return 0
}

// llmAt is the h.pos-th LLM step of case h.caseID. Caller holds mu.
func (s *store) llmAt(h hit) (llmRef, bool) {
	n, ok := s.entry(h.caseID)
	if !ok {
		return llmRef{}, false
	}
	from, to := s.llmRange(n)
	if h.pos < 0 || h.pos >= int(to-from) {
		return llmRef{}, false
	}
	return *s.llms.at(from + uint32(h.pos)), true
}

// llmStep reads the h.pos-th LLM step of case h.caseID.
func (s *store) llmStep(ctx context.Context, h hit) (*replaycase.Step, error) {
	s.mu.RLock()
	_, ok := s.llmAt(h)
	s.mu.RUnlock()
	if !ok {
		return nil, noCase(h.caseID)
	}
	c, err := s.get(ctx, h.caseID)
	if err != nil {
		return nil, err
	}
	if st := nthLLMStep(c, h.pos); st != nil {
		return st, nil
	}
	return nil, fmt.Errorf("case %s: no LLM step %d", h.caseID, h.pos)
}

// nthLLMStep is the n-th LLM step of a case (nil when it has fewer).
func nthLLMStep(c *replaycase.Case, n int) *replaycase.Step {
	for i := range c.Steps {
		if c.Steps[i].Kind == replaycase.StepLLM {
			if n == 0 {
				return &c.Steps[i]
			}
			n--
		}
	}
	return nil
}

// callSiteID names the h.pos-th LLM step of case h.caseID, from the index.
func (s *store) callSiteID(h hit) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if l, ok := s.llmAt(h); ok && l.fields != noFields {
		return "cs_" + l.id.String()
	}
	return ""
}

// firstCase is the first case in start order ("" when there is none).
func (s *store) firstCase() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.look.ordered) == 0 {
		return ""
	}
	return s.entries.at(s.look.ordered[0]).id.String()
}

// caseFilter selects cases for a listing; zero fields select everything.
type caseFilter struct {
	status, agent string
	since, until  time.Time
}

// list returns the ids of at most limit cases the filter selects, in the listing's order
// (start time, then id), after the cursor when one is given, with the cursor of the last one,
// and whether more follow.
func (s *store) list(f caseFilter, after *caseCursor, limit int) (page []string, last caseCursor, more bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	since, until := unixNanos(f.since, math.MinInt64), unixNanos(f.until, math.MaxInt64)
	ordered := s.look.ordered
	if after != nil {
		ordered = ordered[sort.Search(len(ordered), func(i int) bool {
			c := s.entries.at(ordered[i])
			return after.before(c.start, c.id)
		}):]
	}
	for _, n := range ordered {
		c := s.entries.at(n)
		sum := s.summaries.values[*s.summaryOf.at(n)]
		if (f.status != "" && sum.status != f.status) || (f.agent != "" && sum.agent != f.agent) || c.start < since || c.start >= until {
			continue
		}
		if len(page) == limit {
			return page, last, true
		}
		page = append(page, c.id.String())
		last = caseCursor{c.start, c.id}
	}
	return page, last, false
}

// unixNanos is t in Unix nanoseconds, clamped to what they can hold; unset when t is zero.
func unixNanos(t time.Time, unset int64) int64 {
	switch {
	case t.IsZero():
		return unset
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// callPage is a page of the recorded occurrences of a call-site id.
type callPage struct {
	hits []hit
	// last is the index's number of the page's last occurrence (byCall orders a call-site id's
	// occurrences by it, and a refresh keeps it; a restart does not: see callToken): the next
	// page starts after it, so an occurrence removed from a page already read moves none of the
	// later pages.
	last uint32
	all  int  // the occurrences of the id in all
	more bool // occurrences follow the page
}

// callsFor lists at most limit recorded occurrences of a call-site id, after the one numbered
// *after when it is given: a page costs its own occurrences, not all.
func (s *store) callsFor(id string, after *uint32, limit int) callPage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	lo, hi := s.callRun(id)
	from := lo
	if after != nil {
		from += sort.Search(hi-lo, func(i int) bool { return s.look.byCall[lo+i] > *after })
	}
	to := from + min(limit, hi-from)
	p := callPage{hits: s.hitsOf(from, to), all: hi - lo, more: to < hi}
	if to > from {
		p.last = s.look.byCall[to-1]
	}
	return p
}
