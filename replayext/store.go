package replayext

import (
	"encoding/hex"
	"errors"
	"fmt"
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
// content is read from the Parquet files on demand (one row, through dataset.ReadCase) and
// kept in a small LRU cache, so memory does not grow with what the cases hold. Each refresh
// indexes only the files published since the last one, so cases written by any collector into
// the same root become replayable.
type store struct {
	lister *dataset.Lister
	cache  *caseCache

	mu        sync.RWMutex
	files     []string              // data files indexed, by number
	cases     map[string]*caseEntry // by case id
	ordered   []*caseEntry          // by start time, then case id
	calls     map[callKey][]stepRef // call-site id → recorded LLM steps, in recorded order
	fieldSets [][]string            // the distinct call-site field sets, interned
}

// caseEntry is what the index keeps of one case.
type caseEntry struct {
	id        string
	file      int32 // in store.files
	row       int32
	status    replaycase.Status
	agent     string
	startTime time.Time
	llm       []llmRef // its LLM steps, in order
}

// llmRef is one LLM step of a case: its index among the case's steps, its call-site id and
// field set.
type llmRef struct {
	step   int32
	fields uint16 // in store.fieldSets
	id     callKey
}

// callKey is a call-site id as its 16 bytes ("cs_" and 32 hex digits), a third of the string's
// memory.
type callKey [16]byte

func parseCallKey(id string) (callKey, bool) {
	var k callKey
	hexID, ok := strings.CutPrefix(id, "cs_")
	if !ok || len(hexID) != 32 {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(hexID))
	return k, err == nil
}

func (k callKey) String() string { return "cs_" + hex.EncodeToString(k[:]) }

// stepRef is one recorded LLM step: its case and its position among the case's LLM steps.
type stepRef struct {
	c   *caseEntry
	pos int
}

func newStore(root string, cacheSize int) *store {
	return &store{
		lister: dataset.NewLister(root, dataset.Cases, dataset.Quarantine), cache: newCaseCache(cacheSize),
		cases: map[string]*caseEntry{}, calls: map[callKey][]stepRef{},
	}
}

// refresh indexes the files published since the last refresh. It returns how many cases were
// added and the files it could not read (they are retried on the next refresh).
func (s *store) refresh() (added int, failed map[string]error) {
	files, err := s.lister.Next()
	if err != nil {
		failed = map[string]error{"": err}
	}
	for _, f := range files {
		entries, err := dataset.ReadIndex(f.Path)
		if err == nil {
			err = s.fillLegacyIDs(f.Path, entries)
		}
		if err != nil {
			if failed == nil {
				failed = map[string]error{}
			}
			failed[f.Path] = err
			s.lister.Retry(f)
			continue
		}
		added += s.add(f.Path, entries)
	}
	return added, failed
}

// fillLegacyIDs computes the call-site ids of files written before they were recorded.
func (s *store) fillLegacyIDs(path string, entries []dataset.IndexEntry) error {
	for i := range entries {
		for j, ref := range entries[i].LLMSteps {
			if ref.CallSiteID != "" {
				continue
			}
			c, err := dataset.ReadCase(path, entries[i].Row)
			if err != nil {
				return err
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
		if _, dup := s.cases[e.CaseID]; dup {
			continue // at-least-once delivery: the same case written twice
		}
		c := &caseEntry{id: e.CaseID, file: file, row: int32(e.Row), status: e.Status, agent: e.AgentName, startTime: e.StartTime}
		for _, ref := range e.LLMSteps {
			key, ok := parseCallKey(ref.CallSiteID)
			if !ok {
				continue // not a call-site id this build computes: no live request can match it
			}
			c.llm = append(c.llm, llmRef{step: int32(ref.Index), fields: s.internFields(ref.CallSiteFields), id: key})
			s.calls[key] = append(s.calls[key], stepRef{c, len(c.llm) - 1})
		}
		s.cases[c.id] = c
		s.ordered = append(s.ordered, c)
		added++
	}
	sort.SliceStable(s.ordered, func(i, j int) bool {
		a, b := s.ordered[i], s.ordered[j]
		if !a.startTime.Equal(b.startTime) {
			return a.startTime.Before(b.startTime)
		}
		return a.id < b.id
	})
	return added
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

// get reads a case's content (from the cache, else from its file).
func (s *store) get(id string) (*replaycase.Case, error) {
	if c, ok := s.cache.get(id); ok {
		return c, nil
	}
	s.mu.RLock()
	e, ok := s.cases[id]
	var path string
	if ok {
		path = s.files[e.file]
	}
	s.mu.RUnlock()
	if !ok {
		return nil, errNoCase
	}
	c, err := dataset.ReadCase(path, int64(e.row))
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
	_, ok := s.cases[id]
	return ok
}

// match returns the recorded LLM steps whose call-site id equals the request's, computed over
// each recorded field set; only steps of caseID when it is set.
func (s *store) match(req callsite.Request, caseID string) (string, []hit) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, fields := range s.fieldSets {
		id := req.ID(fields)
		key, _ := parseCallKey(id)
		var hits []hit
		for _, r := range s.calls[key] {
			if caseID == "" || r.c.id == caseID {
				hits = append(hits, hit{r.c.id, r.pos})
			}
		}
		if len(hits) > 0 {
			return id, hits
		}
	}
	return "", nil
}

// llmCount is how many LLM steps the case recorded.
func (s *store) llmCount(caseID string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.cases[caseID]; ok {
		return len(e.llm)
	}
	return 0
}

// llmStep reads the h.pos-th LLM step of case h.caseID.
func (s *store) llmStep(h hit) (*replaycase.Step, error) {
	s.mu.RLock()
	e, ok := s.cases[h.caseID]
	s.mu.RUnlock()
	if !ok || h.pos >= len(e.llm) {
		return nil, errNoCase
	}
	c, err := s.get(h.caseID)
	if err != nil {
		return nil, err
	}
	return &c.Steps[e.llm[h.pos].step], nil
}

// callSiteID names the h.pos-th LLM step of case h.caseID, from the index.
func (s *store) callSiteID(h hit) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.cases[h.caseID]; ok && h.pos < len(e.llm) {
		return e.llm[h.pos].id.String()
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
	return s.ordered[0].id
}

// list returns the ids of the cases that pass keep, in start order.
func (s *store) list(keep func(*caseEntry) bool) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, c := range s.ordered {
		if keep(c) {
			out = append(out, c.id)
		}
	}
	return out
}

// callsFor lists every recorded occurrence of a call-site id.
func (s *store) callsFor(id string) []hit {
	key, ok := parseCallKey(id)
	if !ok {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []hit
	for _, r := range s.calls[key] {
		out = append(out, hit{r.c.id, r.pos})
	}
	return out
}

// caseCache keeps the most recently read cases.
type caseCache struct {
	mu    sync.Mutex
	size  int
	order []string // least recently used first
	cases map[string]*replaycase.Case
}

func newCaseCache(size int) *caseCache {
	return &caseCache{size: size, cases: map[string]*replaycase.Case{}}
}

func (c *caseCache) get(id string) (*replaycase.Case, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.cases[id]
	if ok {
		c.touch(id)
	}
	return v, ok
}

func (c *caseCache) put(id string, v *replaycase.Case) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cases[id]; !ok && len(c.cases) >= c.size {
		delete(c.cases, c.order[0])
		c.order = c.order[1:]
	}
	c.cases[id] = v
	c.touch(id)
}

// touch moves id to the most recently used end. The cache is small, so a slice will do.
func (c *caseCache) touch(id string) {
	if i := slices.Index(c.order, id); i >= 0 {
		c.order = append(c.order[:i], c.order[i+1:]...)
	}
	c.order = append(c.order, id)
}
