package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
)

type counting struct {
	starts, stops int
	err           error
}

func (c *counting) Start(context.Context, component.Host) error { c.starts++; return c.err }
func (c *counting) Shutdown(context.Context) error              { c.stops++; return c.err }

func TestOneInstancePerKeyStartedAndStoppedOnce(t *testing.T) {
	m := NewMap[string, *counting]()
	created := 0
	create := func() (*counting, error) { created++; return &counting{}, nil }
	a, err := m.LoadOrStore("k", create)
	require.NoError(t, err)
	b, err := m.LoadOrStore("k", create)
	require.NoError(t, err)
	assert.Same(t, a, b)
	assert.Equal(t, 1, created)

	ctx, host := context.Background(), componenttest.NewNopHost()
	require.NoError(t, a.Start(ctx, host))
	require.NoError(t, b.Start(ctx, host))
	assert.Equal(t, 1, a.Unwrap().starts)

	require.NoError(t, a.Shutdown(ctx))
	assert.Zero(t, m.Len(), "forgotten after the first shutdown")
	require.NoError(t, b.Shutdown(ctx))
	assert.Equal(t, 1, a.Unwrap().stops)

	c, err := m.LoadOrStore("k", create)
	require.NoError(t, err)
	assert.NotSame(t, a, c, "a reload gets a new instance")
}

func TestCreateErrorStoresNothing(t *testing.T) {
	m := NewMap[int, *counting]()
	_, err := m.LoadOrStore(1, func() (*counting, error) { return nil, errors.New("bad config") })
	require.ErrorContains(t, err, "bad config")
	assert.Zero(t, m.Len())
}

func TestStartAndShutdownErrorsReachTheFirstCaller(t *testing.T) {
	m := NewMap[int, *counting]()
	c, err := m.LoadOrStore(1, func() (*counting, error) { return &counting{err: errors.New("boom")}, nil })
	require.NoError(t, err)
	assert.ErrorContains(t, c.Start(context.Background(), componenttest.NewNopHost()), "boom")
	assert.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	assert.ErrorContains(t, c.Shutdown(context.Background()), "boom")
	assert.NoError(t, c.Shutdown(context.Background()))
}
