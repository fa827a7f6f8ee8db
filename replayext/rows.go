package replayext

import (
	"context"
	"errors"
	"io/fs"

	"github.com/reprise-dev/reprise/dataset"
)

// summariesOf reads the summaries of several cases, from the case cache or one pass per file
// over the summary columns only, in the order of ids. A case the index no longer holds is left
// out: a listing finds its ids, then reads them without the lock, so a refresh in between may
// have forgotten a case (retention removed its file), or retention may have deleted the file
// before a refresh forgot it.
func (s *store) summariesOf(ctx context.Context, ids []string) ([]*dataset.CaseSummary, error) {
	out := make([]*dataset.CaseSummary, len(ids))
	type want struct {
		i   int
		row int64
	}
	byFile := map[string][]want{}
	s.mu.RLock()
	for i, id := range ids {
		key, ok := parseHexKey(id)
		if !ok {
			continue
		}
		if c, ok := s.cache.Get(key); ok {
			out[i] = dataset.SummaryOf(c)
			continue
		}
		if path, row, ok := s.caseFile(key); ok {
			byFile[path] = append(byFile[path], want{i, row})
		}
	}
	s.mu.RUnlock()
	for path, wants := range byFile {
		rows := make([]int64, len(wants))
		for j, w := range wants {
			rows[j] = w.row
		}
		read, err := s.src.readSummaries(ctx, path, rows)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, w := range wants {
			out[w.i] = read[w.row]
		}
	}
	kept := out[:0]
	for _, sum := range out {
		if sum != nil {
			kept = append(kept, sum)
		}
	}
	return kept, nil
}
