package replayext

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/reprise-dev/reprise/replaycase"
)

// caseCache keeps the most recently read cases, by their ids' 16 bytes (an id's spelling,
// lower- or upper-case hex, does not make a second entry); it is safe for concurrent use.
type caseCache = lru.Cache[hexKey, *replaycase.Case]

// newCaseCache keeps the size most recently read cases. lru.New refuses only a size below 1,
// which Config.Validate refuses first (case_cache_size).
func newCaseCache(size int) *caseCache {
	c, _ := lru.New[hexKey, *replaycase.Case](max(size, 1))
	return c
}
