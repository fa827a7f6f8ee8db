// Package sharedcomponent lets the traces and the logs faces of one component ID share one
// instance, started once and shut down once, the way contrib's internal/sharedcomponent does
// for receivers and exporters that hold a single resource. The replay_case processor and the
// replay_parquet receiver both use it.
//
// The instance starts at the first face's Start and stops at the first face's Shutdown. The
// collector shuts its graph down upstream first: a face is shut down before the components it
// sends to, and the other face is shut down after it, so at the first Shutdown the consumers of
// both faces are still running. That is the last moment the instance can hand everything on:
// the processor flushes its open cases into both pipelines, the receiver stops reading between
// two pushes. Waiting for the last face instead would let the instance push into a pipeline
// whose exporter has already stopped.
package sharedcomponent

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Map holds the live instances by key (the component's *Config: the collector hands the same
// pointer to every create call of one component ID).
type Map[K comparable, V component.Component] struct {
	mu         sync.Mutex
	components map[K]*Component[V]
}

// NewMap returns an empty Map.
func NewMap[K comparable, V component.Component]() *Map[K, V] {
	return &Map[K, V]{components: map[K]*Component[V]{}}
}

// LoadOrStore returns the instance stored under key, creating it with create if there is none.
func (m *Map[K, V]) LoadOrStore(key K, create func() (V, error)) (*Component[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.components[key]; ok {
		return c, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	c := &Component[V]{component: v}
	c.remove = func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.components, key)
	}
	m.components[key] = c
	return c, nil
}

// Len is the number of live instances.
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.components)
}

// Component wraps one shared instance so that Start and Shutdown reach it once each, whichever
// pipeline calls first.
type Component[V component.Component] struct {
	component V
	startOnce sync.Once
	stopOnce  sync.Once
	remove    func()
}

// Unwrap returns the shared instance.
func (c *Component[V]) Unwrap() V { return c.component }

// Start starts the instance on the first call; later calls return nil.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	var err error
	c.startOnce.Do(func() { err = c.component.Start(ctx, host) })
	return err
}

// Shutdown shuts the instance down on the first call and forgets it, so that a new pipeline
// built from the same config (a collector reload) gets a new instance; later calls return nil.
func (c *Component[V]) Shutdown(ctx context.Context) error {
	var err error
	c.stopOnce.Do(func() {
		err = c.component.Shutdown(ctx)
		c.remove()
	})
	return err
}
