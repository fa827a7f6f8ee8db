package normalize

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Flattened list attributes: OpenInference and OpenLLMetry write a list of messages, tools or
// documents as one attribute per field of each item, "llm.input_messages.3.message.role".
// indexed groups them into items. Each item is a slice of its fields, not a map: a model call
// carries a few dozen of these attributes, and a map per item (with a map of items to sort
// them) made about a fifth of the objects normalizing allocated (docs/benchmarks.md, part 22).

// indexedField is one field of an item of a flattened list.
type indexedField struct {
	index int    // the item's position in the list, as recorded
	name  string // the key after "{prefix}{index}."
	value pcommon.Value
}

// item is the fields of one item, in the order they were recorded.
type item []indexedField

// get returns the field called name. A field recorded twice (OTLP does not forbid duplicate
// keys, and "01" and "1" are the same index) is the one recorded last.
func (it item) get(name string) (pcommon.Value, bool) {
	for i := len(it) - 1; i >= 0; i-- {
		if it[i].name == name {
			return it[i].value, true
		}
	}
	return pcommon.Value{}, false
}

// str is the field called name as a string, "" when there is none.
func (it item) str(name string) string {
	if v, ok := it.get(name); ok {
		return v.AsString()
	}
	return ""
}

// indexed groups the attributes of a under prefix: prefix "llm.input_messages." turns
// "llm.input_messages.3.message.role" into item 3, field "message.role". Items come back in
// numeric order; keys whose index is not a non-negative integer are ignored.
func indexed(a pcommon.Map, prefix string) []item {
	n := 0
	for k := range a.All() {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	fields := make([]indexedField, 0, n)
	for k, v := range a.All() {
		fields = appendIndexed(fields, k, v, prefix)
	}
	return items(fields)
}

// sub groups the fields of an item further: "message.tool_calls.0.tool_call.id" with prefix
// "message.tool_calls." becomes item 0, field "tool_call.id". It repeats indexed's loops over a
// slice: one function over an iter.Seq2 for both made the closures escape, 20 % more objects in
// BenchmarkBuildFixtureRuns.
func (it item) sub(prefix string) []item {
	n := 0
	for _, f := range it {
		if strings.HasPrefix(f.name, prefix) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	fields := make([]indexedField, 0, n)
	for _, f := range it {
		fields = appendIndexed(fields, f.name, f.value, prefix)
	}
	return items(fields)
}

// appendIndexed appends key's field to fields when key is {prefix}{index}.{name}.
func appendIndexed(fields []indexedField, key string, v pcommon.Value, prefix string) []indexedField {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return fields
	}
	dot := strings.IndexByte(rest, '.')
	if dot <= 0 {
		return fields
	}
	i, err := strconv.Atoi(rest[:dot])
	if err != nil || i < 0 {
		return fields
	}
	return append(fields, indexedField{index: i, name: rest[dot+1:], value: v})
}

// items cuts fields into items by index, in numeric order, each keeping its fields in the
// order they were recorded (a stable sort: instrumentations write them in order already).
func items(fields []indexedField) []item {
	if len(fields) == 0 {
		return nil
	}
	slices.SortStableFunc(fields, func(a, b indexedField) int { return cmp.Compare(a.index, b.index) })
	n := 1
	for i := 1; i < len(fields); i++ {
		if fields[i].index != fields[i-1].index {
			n++
		}
	}
	out := make([]item, 0, n)
	start := 0
	for i := 1; i <= len(fields); i++ {
		if i == len(fields) || fields[i].index != fields[start].index {
			out = append(out, fields[start:i:i])
			start = i
		}
	}
	return out
}
