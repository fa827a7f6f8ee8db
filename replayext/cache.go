package replayext

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/reprise-dev/reprise/replaycase"
)

// caseCache keeps the most recently read cases; it is safe for concurrent use.
type caseCache = lru.Cache[string, *replaycase.Case]

// newCaseCache keeps the size most recently read cases. lru.New refuses only a size below 1,
// which Config.Validate refuses first (case_cache_size).
func newCaseCache(size int) *caseCache {
	c, _ := lru.New[string, *replaycase.Case](max(size, 1))
	return c
}
