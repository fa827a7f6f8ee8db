package replayext

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
)

// stepRef is one recorded LLM step: step is its index in the case, pos its position among the
// case's LLM steps.
type stepRef struct {
	c    *replaycase.Case
	step int
	pos  int
}

func (r stepRef) st() *replaycase.Step { return &r.c.Steps[r.step] }

// store holds the cases of a dataset root in memory, indexed by case id and call-site id. It
// reads cases/ and quarantine/ and picks up new files on every refresh, so cases written by
// any collector into the same root become replayable.
type store struct {
	root string

	mu        sync.RWMutex
	cases     map[string]*replaycase.Case
	ordered   []*replaycase.Case   // by start time, then case id
	calls     map[string][]stepRef // call-site id → recorded steps, in recorded order
	llm       map[string][]stepRef // case id → its LLM steps, in order
	fieldSets [][]string           // distinct call-site field sets
	loaded    map[string]bool      // files already read
}

func newStore(root string) *store {
	return &store{root: root, cases: map[string]*replaycase.Case{}, calls: map[string][]stepRef{}, llm: map[string][]stepRef{}, loaded: map[string]bool{}}
}

// refresh reads the files it has not read yet. It returns how many cases were added and the
// files it could not read (they are retried on the next refresh).
func (s *store) refresh() (added int, failed map[string]error) {
	var files []string
	for _, dataset := range []string{"cases", "quarantine"} {
		_ = filepath.WalkDir(filepath.Join(s.root, dataset), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") {
				files = append(files, path)
			}
			return nil
		})
	}
	sort.Strings(files)
	var fresh []*replaycase.Case
	for _, f := range files {
		s.mu.RLock()
		done := s.loaded[f]
		s.mu.RUnlock()
		if done {
			continue
		}
		rows, err := parquet.ReadFile[replaycase.Case](f)
		if err != nil {
			if failed == nil {
				failed = map[string]error{}
			}
			failed[f] = err
			continue
		}
		for i := range rows {
			fresh = append(fresh, &rows[i])
		}
		s.mu.Lock()
		s.loaded[f] = true
		s.mu.Unlock()
	}
	if len(fresh) == 0 {
		return 0, failed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range fresh {
		if _, dup := s.cases[c.CaseID]; dup {
			continue // at-least-once delivery: the same case written twice
		}
		s.add(c)
		added++
	}
	sort.SliceStable(s.ordered, func(i, j int) bool {
		a, b := s.ordered[i], s.ordered[j]
		if !a.StartTime.Equal(b.StartTime) {
			return a.StartTime.Before(b.StartTime)
		}
		return a.CaseID < b.CaseID
	})
	return added, failed
}

// add indexes one case. Caller holds mu.
func (s *store) add(c *replaycase.Case) {
	c.RawSpans, c.RawEvents = nil, nil // not served; keeps memory to what replay needs
	s.cases[c.CaseID] = c
	s.ordered = append(s.ordered, c)
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.Kind != replaycase.StepLLM {
			continue
		}
		if st.CallSiteID == "" { // written before call-site ids existed
			req := callsite.FromStep(st)
			st.CallSiteFields = req.RecordedFields()
			st.CallSiteID = req.ID(st.CallSiteFields)
		}
		ref := stepRef{c, i, len(s.llm[c.CaseID])}
		s.llm[c.CaseID] = append(s.llm[c.CaseID], ref)
		s.calls[st.CallSiteID] = append(s.calls[st.CallSiteID], ref)
		s.addFieldSet(st.CallSiteFields)
	}
}

func (s *store) addFieldSet(fields []string) {
	key := strings.Join(fields, ",")
	for _, fs := range s.fieldSets {
		if strings.Join(fs, ",") == key {
			return
		}
	}
	s.fieldSets = append(s.fieldSets, fields)
}

func (s *store) get(id string) (*replaycase.Case, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.cases[id]
	return c, ok
}

// match returns the recorded LLM steps whose call-site id equals the request's, computed over
// each recorded field set; only steps of caseID when it is set.
func (s *store) match(req callsite.Request, caseID string) (string, []hit) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, fields := range s.fieldSets {
		id := req.ID(fields)
		var hits []hit
		for _, r := range s.calls[id] {
			if caseID == "" || r.c.CaseID == caseID {
				hits = append(hits, hit{r.c.CaseID, r.pos})
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
	return len(s.llm[caseID])
}

// llmStep is the h.pos-th LLM step of case h.caseID.
func (s *store) llmStep(h hit) *replaycase.Step {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.llm[h.caseID][h.pos].st()
}

// firstCase is the first case in start order ("" when there is none).
func (s *store) firstCase() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.ordered) == 0 {
		return ""
	}
	return s.ordered[0].CaseID
}

func (s *store) has(caseID string) bool {
	_, ok := s.get(caseID)
	return ok
}

func (s *store) toolCalls(caseID string) []replaycase.ToolCall {
	c, _ := s.get(caseID)
	return c.ToolCalls
}

func (s *store) retrievals(caseID string) []replaycase.Retrieval {
	c, _ := s.get(caseID)
	return c.RetrievalRefs
}

// list returns the cases that pass keep, in start order.
func (s *store) list(keep func(*replaycase.Case) bool) []*replaycase.Case {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*replaycase.Case
	for _, c := range s.ordered {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

func (s *store) callsFor(id string) []stepRef {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]stepRef(nil), s.calls[id]...)
}
