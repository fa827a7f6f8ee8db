package normalize

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// groupedByMaps is how flattened lists were grouped before items became slices: a map of
// items, each a map of its fields, sorted by index. It is the reference the slices must match.
func groupedByMaps(fields map[string]string, prefix string) []map[string]string {
	byIndex := map[int]map[string]string{}
	keys := slices.Sorted(maps.Keys(fields))
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		rest := k[len(prefix):]
		dot := strings.IndexByte(rest, '.')
		if dot <= 0 {
			continue
		}
		i, err := strconv.Atoi(rest[:dot])
		if err != nil || i < 0 {
			continue
		}
		if byIndex[i] == nil {
			byIndex[i] = map[string]string{}
		}
		byIndex[i][rest[dot+1:]] = fields[k]
	}
	idx := slices.Collect(maps.Keys(byIndex))
	sort.Ints(idx)
	out := make([]map[string]string, len(idx))
	for n, i := range idx {
		out[n] = byIndex[i]
	}
	return out
}

// asMap is an item's fields by name, each the one get returns.
func asMap(it item) map[string]string {
	m := map[string]string{}
	for _, f := range it {
		m[f.name] = it.str(f.name)
	}
	return m
}

// For any set of attributes, indexed and sub give the items, fields and values that grouping
// by maps gave, in the same order. Keys are added in sorted order, so that where two keys name
// the same field ("p.1.x" and "p.01.x") both groupings keep the later one.
func FuzzIndexedGroupsAsMapsDid(f *testing.F) {
	f.Add("p.0.role=user\np.0.content=hi\np.1.role=assistant\np.1.s.0.id=a\np.1.s.1.id=b\np.1.s.0.name=f")
	f.Add("p.01.x=1\np.1.x=2\np.1.y=3\np.-1.x=4\np.a.x=5\np..x=6\np.2=7\nq.0.x=8")
	f.Add("p.10.x=a\np.9.x=b\np.100.s.3.y=c\np.100.s.03.y=d")
	f.Fuzz(func(t *testing.T, spec string) {
		fields := map[string]string{}
		for line := range strings.SplitSeq(spec, "\n") {
			k, v, _ := strings.Cut(line, "=")
			fields[k] = v
		}
		a := pcommon.NewMap()
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			a.PutStr(k, fields[k])
		}
		got := indexed(a, "p.")
		want := groupedByMaps(fields, "p.")
		require.Len(t, got, len(want))
		for n, it := range got {
			require.Equal(t, want[n], asMap(it), "item %d", n)
			for _, f := range it {
				require.Equal(t, it[0].index, f.index, "item %d holds one index", n)
			}
			if n > 0 {
				require.Less(t, got[n-1][0].index, it[0].index, "items in numeric order")
			}
			subs := it.sub("s.")
			wantSubs := groupedByMaps(asMap(it), "s.")
			require.Len(t, subs, len(wantSubs), "sub-items of item %d", n)
			for m, s := range subs {
				require.Equal(t, wantSubs[m], asMap(s), "sub-item %d of item %d", m, n)
			}
		}
	})
}

// An attribute that names no item, and a map without the prefix, give no items.
func TestIndexedWithoutItems(t *testing.T) {
	a := pcommon.NewMap()
	a.PutStr("llm.input_messages", "[]")
	a.PutStr("llm.input_messages.x.message.role", "user")
	require.Empty(t, indexed(a, "llm.input_messages."))
	require.Empty(t, indexed(pcommon.NewMap(), "llm.input_messages."))
	_, ok := item(nil).get("message.role")
	require.False(t, ok)
}

// A list attribute read in place gives what reading its raw value gave: strings as they are,
// anything else as its JSON text.
func TestGetStringsOfAListReadsItInPlace(t *testing.T) {
	a := pcommon.NewMap()
	s := a.PutEmptySlice("gen_ai.response.finish_reasons")
	s.AppendEmpty().SetStr("stop")
	s.AppendEmpty().SetStr("")
	s.AppendEmpty().SetInt(7)
	s.AppendEmpty().SetDouble(1.5)
	s.AppendEmpty().SetBool(true)
	s.AppendEmpty() // empty
	s.AppendEmpty().SetEmptyMap().PutStr("k", "v")
	s.AppendEmpty().SetEmptySlice().AppendEmpty().SetStr("x")
	s.AppendEmpty().SetEmptyBytes().FromRaw([]byte("b"))
	var want []string
	for _, x := range s.AsRaw() {
		want = append(want, text(x))
	}
	require.Equal(t, want, getStrings(a, "gen_ai.response.finish_reasons"))
	a.PutEmptySlice("empty")
	require.Equal(t, []string{}, getStrings(a, "empty"))
}
