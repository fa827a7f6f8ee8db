package replayext

import (
	"github.com/reprise-dev/reprise/dataset"
)

// summariesOf reads the summaries of several cases, from the case cache or one pass per file
// over the summary columns only, in the order of ids.
func (s *store) summariesOf(ids []string) ([]*dataset.CaseSummary, error) {
	out := make([]*dataset.CaseSummary, len(ids))
	type want struct {
		i   int
		row int64
	}
	byFile := map[string][]want{}
	s.mu.RLock()
	for i, id := range ids {
		if c, ok := s.cache.Get(id); ok {
			out[i] = dataset.SummaryOf(c)
			continue
		}
		path, row, ok := s.caseFile(id)
		if !ok {
			s.mu.RUnlock()
			return nil, errNoCase
		}
		byFile[path] = append(byFile[path], want{i, row})
	}
	s.mu.RUnlock()
	for path, wants := range byFile {
		rows := make([]int64, len(wants))
		for j, w := range wants {
			rows[j] = w.row
		}
		read, err := s.src.readSummaries(path, rows)
		if err != nil {
			return nil, err
		}
		for _, w := range wants {
			out[w.i] = read[w.row]
		}
	}
	return out, nil
}
