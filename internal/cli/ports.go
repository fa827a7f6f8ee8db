package cli

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
)

// The harness's collector takes its ports from its config, and neither the OTLP receiver nor
// the replay extension says which port it bound when given :0, so the harness picks the ports
// itself. Picking is a race in two ways, and both are handled:
//   - between the workers of `reprise ci -j N`: a port another worker picked and has not bound
//     yet is free to the kernel. harnessPorts holds every port a worker uses until its
//     collector stops, so no two workers are given the same one;
//   - with the rest of the machine: a picked port can be taken (by another process, or as the
//     local port of an outgoing connection) before the collector binds it. The collector then
//     fails to start with EADDRINUSE, and the harness starts again on fresh ports.

// portPool hands out loopback ports that nothing listened on a moment ago and that no other
// worker of this process holds.
type portPool struct {
	mu   sync.Mutex
	held map[int]bool
	// listen opens a listener on a port the kernel chooses (tests replace it).
	listen func() (net.Listener, error)
}

var harnessPorts = newPortPool()

func newPortPool() *portPool {
	return &portPool{held: map[int]bool{}, listen: func() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }}
}

// take returns n distinct ports, held until release.
func (p *portPool) take(n int) ([]int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ports []int
	// The listeners stay open until all n are chosen, so that the kernel does not hand out one
	// port twice within the call.
	var open []net.Listener
	defer func() {
		for _, l := range open {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries == 100 {
			return nil, fmt.Errorf("no free loopback port after %d tries", tries)
		}
		l, err := p.listen()
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		open = append(open, l)
		port := l.Addr().(*net.TCPAddr).Port
		if !p.held[port] {
			ports = append(ports, port)
		}
	}
	for _, port := range ports {
		p.held[port] = true
	}
	return ports, nil
}

// release gives ports back once the collector that bound them has stopped.
func (p *portPool) release(ports []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, port := range ports {
		delete(p.held, port)
	}
}

// errPortTaken says the collector could not bind a port the harness picked for it.
var errPortTaken = errors.New("a port picked for the harness was taken before the collector bound it")

// isAddrInUse tells whether err is a failure to bind an address in use. The collector wraps
// its components' start errors, not always with %w, so the text is checked too.
func isAddrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || (err != nil && strings.Contains(err.Error(), "address already in use"))
}
