package replayext

import (
	"cmp"
	"strconv"
	"strings"
)

// caseCursor is where a page of the case listing ended: its last case's start time and id, in
// the listing's order. The next page starts after it, so a case that retention deletes from a
// page already read moves no case of the later pages: an offset did, and the next page skipped
// a case that was still there (TestANextPageSkipsNoCaseWhenAnEarlierOneIsDeleted).
type caseCursor struct {
	start int64 // Unix nanoseconds, as the index holds them
	id    hexKey
}

// String is the cursor as a next_page_token: "<start>_<case id>".
func (c caseCursor) String() string { return strconv.FormatInt(c.start, 10) + "_" + c.id.String() }

// parseCaseCursor reads a next_page_token of the case listing.
func parseCaseCursor(token string) (caseCursor, bool) {
	start, id, found := strings.Cut(token, "_")
	if !found {
		return caseCursor{}, false
	}
	n, err := strconv.ParseInt(start, 10, 64)
	if err != nil {
		return caseCursor{}, false
	}
	k, ok := parseHexKey(id)
	return caseCursor{n, k}, ok
}

// before reports whether the cursor comes before the case that started at start with id.
func (c caseCursor) before(start int64, id hexKey) bool {
	if d := cmp.Compare(c.start, start); d != 0 {
		return d < 0
	}
	return compareKeys(c.id, id) < 0
}

// callTokenPrefix begins a next_page_token of the occurrences of a call: "after_<n>", n the
// index's number of the page's last occurrence (callPage.last). The prefix makes an offset,
// which these tokens were before, refused, not misread.
const callTokenPrefix = "after_"

// callToken is the next_page_token of a page of occurrences that ended at last.
func callToken(last uint32) string { return callTokenPrefix + strconv.FormatUint(uint64(last), 10) }

// parseCallToken reads a next_page_token of the occurrences of a call.
func parseCallToken(token string) (last uint32, ok bool) {
	n, found := strings.CutPrefix(token, callTokenPrefix)
	if !found {
		return 0, false
	}
	v, err := strconv.ParseUint(n, 10, 32)
	return uint32(v), err == nil
}
