package replayparquetreceiver

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver"
)

// sharedMap hands the traces and logs pipelines of one component the same receiver, started
// once and shut down once (when the last pipeline shuts it down).
type sharedMap struct {
	mu sync.Mutex
	m  map[*Config]*shared
}

func newSharedMap() *sharedMap { return &sharedMap{m: map[*Config]*shared{}} }

// shared is one pipeline's handle on the receiver.
type shared struct {
	r     *replayReceiver
	owner *sharedMap
	key   *Config
	refs  int // pipelines created
	live  int // pipelines started and not shut down
}

func (s *sharedMap) acquire(set receiver.Settings, cfg *Config, attach func(*replayReceiver)) (*handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.m[cfg]
	if !ok {
		r, err := newReceiver(set, cfg)
		if err != nil {
			return nil, err
		}
		sh = &shared{r: r, owner: s, key: cfg}
		s.m[cfg] = sh
	}
	attach(sh.r)
	sh.refs++
	return &handle{sh}, nil
}

// handle is what the collector starts and stops, once per pipeline.
type handle struct{ sh *shared }

func (h *handle) Start(ctx context.Context, host component.Host) error {
	s := h.sh.owner
	s.mu.Lock()
	defer s.mu.Unlock()
	h.sh.live++
	if h.sh.live == 1 {
		return h.sh.r.Start(ctx, host)
	}
	return nil
}

func (h *handle) Shutdown(ctx context.Context) error {
	s := h.sh.owner
	s.mu.Lock()
	defer s.mu.Unlock()
	h.sh.refs--
	if h.sh.refs <= 0 {
		delete(s.m, h.sh.key)
	}
	if h.sh.live == 0 {
		return nil
	}
	h.sh.live--
	if h.sh.live == 0 {
		return h.sh.r.Shutdown(ctx)
	}
	return nil
}
