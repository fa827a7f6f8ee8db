package replayparquetreceiver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// rowSelection names what decides, row by row, what a file yields: the row criteria of the
// selection and the form emitted. A checkpoint is counted under it (checkpoints). from, to and
// datasets choose files, not rows, and are left out: changing them keeps the checkpoints of the
// files read before. Lists are sorted first, since their order selects nothing.
func (c *Config) rowSelection() string {
	sorted := func(s []string) []string {
		s = slices.Clone(s)
		slices.Sort(s)
		return s
	}
	b, _ := json.Marshal([]any{c.Emit, sorted(c.Select.Status), sorted(c.Select.ReasonCodes), c.Select.AdapterVersionBelow, sorted(c.Select.CaseIDs)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
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
