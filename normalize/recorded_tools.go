package normalize

import (
	"slices"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// A toolCache holds the tool definitions read from recorded texts, by text. An agent offers
// the same tools, with the same schemas, on every model call of every run, and OpenInference
// and OpenLLMetry record them with every call, so the same text is read again and again: with
// twenty tools of ~1.2 KB, decoding them took 12 % of the collector's CPU, and keeping what
// they give saved 15–18 % (docs/benchmarks.md, part 20). A text not seen before is read as
// before. Only texts read without any problem are kept, so a hit gives what reading the text
// gives.
//
// The cache is bounded by the bytes of the texts it holds; when a new text would pass the bound
// it is emptied and starts again, which costs one read of each text an agent offers.
type toolCache struct {
	mu     sync.Mutex
	byText map[string][]replaycase.ToolDefinition
	bytes  int
}

// maxToolCacheBytes bounds the texts the cache holds: a few agents' tool sets.
const maxToolCacheBytes = 4 << 20

// recordedTools holds OpenInference's single definitions (llm.tools.N.tool.json_schema), and
// recordedToolLists the lists of gen_ai.tool.definitions: the same text read as one or as the
// other gives different definitions.
var (
	recordedTools     = newToolCache()
	recordedToolLists = newToolCache()
)

func newToolCache() *toolCache {
	return &toolCache{byText: map[string][]replaycase.ToolDefinition{}}
}

// get returns a copy of the definitions read from text, which the caller may change.
func (c *toolCache) get(text string) ([]replaycase.ToolDefinition, bool) {
	c.mu.Lock()
	defs, ok := c.byText[text]
	c.mu.Unlock()
	return slices.Clone(defs), ok
}

// put keeps a copy of the definitions read from text without a problem.
func (c *toolCache) put(text string, defs []replaycase.ToolDefinition) {
	if len(text) > maxToolCacheBytes/4 {
		return // one such text would crowd out the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byText[text]; ok {
		return
	}
	if c.bytes+len(text) > maxToolCacheBytes {
		clear(c.byText)
		c.bytes = 0
	}
	c.byText[text] = slices.Clone(defs)
	c.bytes += len(text)
}

// toolsRead is what toolDefinitions gives for a decoded list: the definitions and the problem
// found, if any.
type toolsRead struct {
	defs []replaycase.ToolDefinition
	err  error
}

// read decodes the tool definitions v records and reads them with fromTree: err is the
// decode's problem, the toolsRead holds fromTree's. Recorded text is read once.
func (c *toolCache) read(v pcommon.Value, fromTree func(any) ([]replaycase.ToolDefinition, error)) (toolsRead, error) {
	text := v.Type() == pcommon.ValueTypeStr
	if text {
		if defs, ok := c.get(v.Str()); ok {
			return toolsRead{defs: defs}, nil
		}
	}
	raw, err := decodeToolJSON(v)
	if err != nil {
		return toolsRead{}, err
	}
	defs, err := fromTree(raw)
	if text && err == nil {
		c.put(v.Str(), defs)
	}
	return toolsRead{defs, err}, nil
}

// readToolDefinitions reads a list of tool definitions (gen_ai.tool.definitions) through
// recordedToolLists, for readContent.
func readToolDefinitions(v pcommon.Value) (any, error) {
	read, err := recordedToolLists.read(v, toolDefinitions)
	if err != nil {
		return nil, err
	}
	return read, nil
}
