package normalize

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// toolCache holds the tool definitions read from recorded texts (textCache): with twenty tools
// of ~1.2 KB offered on every call, decoding them took 12 % of the collector's CPU, and keeping
// what they give saved 15–18 % (docs/benchmarks.md, part 20).
type toolCache = textCache[[]replaycase.ToolDefinition]

// recordedTools holds OpenInference's single definitions (llm.tools.N.tool.json_schema), and
// recordedToolLists the lists of gen_ai.tool.definitions: the same text read as one or as the
// other gives different definitions.
var (
	recordedTools     = newToolCache()
	recordedToolLists = newToolCache()
)

func newToolCache() *toolCache {
	return newTextCache(slices.Clone[[]replaycase.ToolDefinition])
}

// toolsRead is what toolDefinitions gives for a decoded list: the definitions and the problem
// found, if any.
type toolsRead struct {
	defs []replaycase.ToolDefinition
	err  error
}

// readTools decodes the tool definitions v records and reads them with fromTree, through c:
// err is the decode's problem, the toolsRead holds fromTree's. Recorded text is read once.
func readTools(c *toolCache, v pcommon.Value, fromTree func(any) ([]replaycase.ToolDefinition, error)) (toolsRead, error) {
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
	read, err := readTools(recordedToolLists, v, toolDefinitions)
	if err != nil {
		return nil, err
	}
	return read, nil
}
