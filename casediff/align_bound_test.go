package casediff

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// searches is a run of n search tool calls; shift changes every query.
func searches(n, shift int) *replaycase.Case {
	c := &replaycase.Case{}
	for i := 0; i < n; i++ {
		c.ToolCalls = append(c.ToolCalls, replaycase.ToolCall{Name: "search",
			Arguments: fmt.Sprintf(`{"q":"query %d","page":%d}`, i+shift, i), Result: `{"hits":[1,2,3]}`})
	}
	return c
}

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A long agent session compared with itself, or with a run in which every call changed, is
// bounded in memory and time: 3000 tool calls a side allocated about 25 GB (a table of every
// pair, and each call's JSON decoded again for every pair) and took about a minute.
func TestLongRunsCompareInBoundedMemory(t *testing.T) {
	const n = 3000
	a := searches(n, 0)
	var same, changed Report
	sameBytes := allocated(func() { same = Compare(a, searches(n, 0)) })
	changedBytes := allocated(func() { changed = Compare(a, searches(n, 1)) })
	assert.Empty(t, same.Findings)
	require.Len(t, changed.Findings, n, "every call paired with its counterpart, its query changed")
	assert.Equal(t, "tool_calls[17].arguments.q", changed.Findings[17].PathA)
	assert.Equal(t, "tool_calls[17].arguments.q", changed.Findings[17].PathB)
	const limit = 256 << 20
	t.Logf("allocated: %d B (same), %d B (changed)", sameBytes, changedBytes)
	assert.Less(t, sameBytes, uint64(limit), "a run compared with itself")
	assert.Less(t, changedBytes, uint64(limit), "a run whose every call changed")

	// One call inserted in the middle of a long run is still one insertion.
	b := searches(n, 0)
	b.ToolCalls = append(b.ToolCalls[:n/2], append([]replaycase.ToolCall{{Name: "fetch", Arguments: `{}`}}, b.ToolCalls[n/2:]...)...)
	r := Compare(a, b)
	require.Len(t, r.Findings, 1, "%+v", r.Findings)
	assert.Equal(t, ToolCallAdded, r.Findings[0].Type)
	assert.Equal(t, fmt.Sprintf("tool_calls[%d]", n/2), r.Findings[0].PathB)
}
