package replayext

import (
	"cmp"
	"errors"
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

// callTokenPrefix begins a next_page_token of the occurrences of a call:
// "after_<index>_<n>", n the number of the page's last occurrence (callPage.last) in the index
// named <index> (store.generation, in hex). The numbers are the index's own: a refresh keeps
// them, but a restart (or another replica) numbers the occurrences again, and n would name
// another one there, so the token says which index it is for. The prefix makes an offset,
// which these tokens were before, refused, not misread.
const callTokenPrefix = "after_"

// callToken is the next_page_token of a page of occurrences that ended at last, in the index
// numbered generation.
func callToken(generation uint64, last uint32) string {
	return callTokenPrefix + strconv.FormatUint(generation, 16) + "_" + strconv.FormatUint(uint64(last), 10)
}

// errNotAPageToken is a page_token that the listing did not give.
var errNotAPageToken = errors.New("page_token must be a next_page_token of this listing")

// errOtherIndex is a next_page_token of another index: this server's since it restarted, or
// another replica's; or "after_<n>", the form before 2026-12-07, which named none.
var errOtherIndex = errors.New("page_token is from a listing this server has rebuilt since (it restarted, or another replica gave the token): list again from the first page, without page_token")

// parseCallToken reads a next_page_token of the occurrences of a call, which must be one the
// index numbered generation gave.
func parseCallToken(token string, generation uint64) (last uint32, err error) {
	rest, found := strings.CutPrefix(token, callTokenPrefix)
	if !found {
		return 0, errNotAPageToken
	}
	index, n, found := strings.Cut(rest, "_")
	if !found { // "after_<n>"
		index, n = "", rest
	}
	v, err := strconv.ParseUint(n, 10, 32)
	if err != nil {
		return 0, errNotAPageToken
	}
	if !found {
		return 0, errOtherIndex
	}
	g, err := strconv.ParseUint(index, 16, 64)
	switch {
	case err != nil:
		return 0, errNotAPageToken
	case g != generation:
		return 0, errOtherIndex
	}
	return uint32(v), nil
}
