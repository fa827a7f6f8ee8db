package replayparquetreceiver

import (
	"slices"
	"strconv"
	"strings"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// selectsFile reports whether a file's partition lies in the dt range (dt strings are
// YYYY-MM-DD, so they compare as strings).
func (s *SelectConfig) selectsFile(f dataset.File) bool {
	return slices.Contains(s.Datasets, f.Dataset) && (s.From == "" || f.Partition >= s.From) && (s.To == "" || f.Partition <= s.To)
}

// selectsCase reports whether a case row matches every non-empty criterion.
func (s *SelectConfig) selectsCase(c *replaycase.Case) bool {
	if len(s.Status) > 0 && !slices.Contains(s.Status, string(c.Status)) {
		return false
	}
	if len(s.CaseIDs) > 0 && !slices.Contains(s.CaseIDs, c.CaseID) {
		return false
	}
	if len(s.ReasonCodes) > 0 && !slices.ContainsFunc(s.ReasonCodes, c.HasReason) {
		return false
	}
	if s.AdapterVersionBelow > 0 {
		if n, ok := adapterVersionNumber(c.AdapterVersion); ok && n >= s.AdapterVersionBelow {
			return false
		}
	}
	return true
}

// adapterVersionNumber parses N out of "reprise-normalize/N".
func adapterVersionNumber(v string) (int, bool) {
	i := strings.LastIndexByte(v, '/')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(v[i+1:])
	return n, err == nil
}
