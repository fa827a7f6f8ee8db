package replaycaseprocessor

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// closing is a buffer taken out of the open set, with why.
type closing struct {
	buf    *traceBuffer
	cause  replaycase.CloseCause
	detail string
	spans  []pcommon.SpanID // the span ids its close remembers, for its closed mark (closed_spans.go)
	events []eventKey       // the event keys its close remembers, likewise
}

func (p *caseProcessor) sweepLoop() {
	defer close(p.done)
	// Shutdown closes stop, which also ends a send that waits on a blocked next consumer (an
	// exporter queue that blocks when full): the batch is kept, and Shutdown's flush sends it
	// within Shutdown's own deadline.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.stop
		cancel()
	}()
	t := time.NewTicker(sweepInterval(p.cfg))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			// A refusal is logged where the batch is first refused, and kept for the next sweep.
			_ = p.sweep(ctx)
		}
	}
}

// sweepInterval checks often enough to honour the shortest timer within a quarter of it.
func sweepInterval(cfg *Config) time.Duration {
	d := min(cfg.RootGracePeriod, cfg.IdleTimeout) / 4
	return min(max(d, 5*time.Millisecond), time.Second)
}

// sweep closes the cases whose time has come.
func (p *caseProcessor) sweep(ctx context.Context) error {
	p.mu.Lock()
	now := p.now()
	var due []closing
	for e := p.order.Front(); e != nil; {
		b := e.Value.(*traceBuffer)
		e = e.Next()
		idle := now.Sub(b.lastSeen)
		switch {
		case b.rootSeen && idle >= p.cfg.RootGracePeriod:
			due = append(due, p.take(b, replaycase.ClosedRootEnded, ""))
		case idle >= p.cfg.IdleTimeout:
			due = append(due, p.take(b, replaycase.ClosedIdle, fmt.Sprintf("nothing arrived for %s", p.cfg.IdleTimeout)))
		case now.Sub(b.firstSeen) >= p.cfg.MaxAge:
			due = append(due, p.take(b, replaycase.ClosedMaxAge, fmt.Sprintf("open for %s", p.cfg.MaxAge)))
		}
	}
	p.outbox = append(p.outbox, due...)
	p.mu.Unlock()
	return p.drain(ctx)
}

// flush closes every open case as of shutdown and sends everything closed. With
// keep_open_on_shutdown it sends only what is closed: the open cases stay in storage, and the
// next start restores and continues them.
func (p *caseProcessor) flush(ctx context.Context) error {
	if p.cfg.KeepOpenOnShutdown {
		return p.drainAtShutdown(ctx)
	}
	p.mu.Lock()
	for e := p.order.Front(); e != nil; e = p.order.Front() {
		p.outbox = append(p.outbox, p.take(e.Value.(*traceBuffer), replaycase.ClosedShutdown, "collector shutdown"))
	}
	p.mu.Unlock()
	return p.drainAtShutdown(ctx)
}
