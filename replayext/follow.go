package replayext

import "sort"

// A session replays one run, and a run follows one recording. On the base URLs that name no
// case, the recordings of a request that may answer it are those of one case: the case the
// session was served last on the stream (cur) when that case recorded the request; else the
// first case that recorded it more often than the session made it (made); else the last case
// that recorded it. So a request the run repeats more often than the case it follows recorded
// it is a repeat, a divergence (lookup), even when other cases recorded the same request:
// serving another case's recording would answer the repeat as if it were the run's own.

// followed returns the recordings of call-site id in the case a session follows (above), and
// how many recordings of it all cases hold. It looks at one case's steps, or, when cur did
// not record the request, at the cases in turn until one recorded it more often than made:
// never at every recording of a request that every case made.
func (s *store) followed(id, cur string, made int) (hits []hit, all int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	lo, hi := s.callRun(id)
	if cur != "" {
		if hits := s.occurrencesIn(id, cur); len(hits) > 0 {
			return hits, hi - lo
		}
	}
	by := s.look.byCall
	for i := lo; i < hi; {
		// A case's steps are numbered together, and byCall orders a key's steps by number:
		// the key's steps in the case of by[i] are those before the case's last step.
		_, to := s.llmRange(s.entryOfLLM(by[i]))
		j := i + sort.Search(hi-i, func(k int) bool { return by[i+k] >= to })
		if j-i > made || j == hi {
			return s.hitsOf(i, j), hi - lo
		}
		i = j
	}
	return nil, 0
}
