package replayext

// smallMap is a map that keeps its first few entries in a slice. Most sessions hold one or two
// cursors (a client without a session header gets a fresh session per request), and a Go
// map's first entry allocates a group of eight slots, most of a fresh session's cost.
// The zero value is empty and ready to use.
type smallMap[K comparable, V any] struct {
	few  []smallEntry[K, V]
	many map[K]V // once there are more than smallMapSlots entries; then few is nil
}

type smallEntry[K comparable, V any] struct {
	key   K
	value V
}

// smallMapSlots is how many entries stay in the slice before they move to a map.
const smallMapSlots = 8

// get returns k's value and whether k is present.
func (m *smallMap[K, V]) get(k K) (V, bool) {
	if m.many != nil {
		v, ok := m.many[k]
		return v, ok
	}
	for _, e := range m.few {
		if e.key == k {
			return e.value, true
		}
	}
	var zero V
	return zero, false
}

// value returns k's value, the zero value when k is absent.
func (m *smallMap[K, V]) value(k K) V {
	v, _ := m.get(k)
	return v
}

// set sets k's value.
func (m *smallMap[K, V]) set(k K, v V) {
	if m.many != nil {
		m.many[k] = v
		return
	}
	for i := range m.few {
		if m.few[i].key == k {
			m.few[i].value = v
			return
		}
	}
	if len(m.few) < smallMapSlots {
		m.few = append(m.few, smallEntry[K, V]{k, v})
		return
	}
	m.many = make(map[K]V, 2*smallMapSlots)
	for _, e := range m.few {
		m.many[e.key] = e.value
	}
	m.many[k] = v
	m.few = nil
}

// len is the number of entries.
func (m *smallMap[K, V]) len() int { return len(m.few) + len(m.many) }
