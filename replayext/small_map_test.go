package replayext

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A smallMap answers as a Go map does, before and after its entries move to a map.
func TestSmallMapIsAMap(t *testing.T) {
	var m smallMap[string, int]
	want := map[string]int{}
	for i := range 3 * smallMapSlots {
		k := fmt.Sprint(i % (2 * smallMapSlots)) // the second half overwrites
		m.set(k, i)
		want[k] = i
		assert.Equal(t, len(want), m.len())
		for j := range 3 * smallMapSlots {
			k := fmt.Sprint(j)
			v, ok := m.get(k)
			w, wok := want[k]
			assert.Equal(t, wok, ok, "key %s after %d sets", k, i+1)
			assert.Equal(t, w, v)
			assert.Equal(t, w, m.value(k))
		}
	}
	assert.NotNil(t, m.many)
	assert.Nil(t, m.few)
}
