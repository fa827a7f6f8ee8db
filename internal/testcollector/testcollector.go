// Package testcollector runs a collector binary as a real process for end-to-end tests: a
// config written to a temporary file, output captured, ready once a TCP port accepts, killed
// when the test ends.
package testcollector

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Process is a running collector.
type Process struct {
	Cmd    *exec.Cmd
	Output *Output
}

// Output collects a process's stdout and stderr; safe to read while the process writes.
type Output struct {
	mu      sync.Mutex
	b       bytes.Buffer
	readyAt time.Time // when readyLine first appeared
}

// readyLine is what the collector logs once every component has started.
var readyLine = []byte("Everything is ready")

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	from := max(0, o.b.Len()-len(readyLine)) // the line may come in two writes
	n, err := o.b.Write(p)
	if o.readyAt.IsZero() && bytes.Contains(o.b.Bytes()[from:], readyLine) {
		o.readyAt = time.Now()
	}
	return n, err
}

// signalGrace is how long after readyLine a test waits before sending SIGTERM. The collector
// (otelcol.Collector.Run) starts handling SIGTERM only after it logs that line, and a SIGTERM
// that comes first kills the process instead of shutting it down: a test that stopped a
// collector at once failed that way under load.
const signalGrace = 250 * time.Millisecond

// WaitUntilSignalsAreHandled returns once the collector has logged readyLine and signalGrace has
// passed since, so that SIGTERM shuts it down cleanly; it fails the test after 20 s without it.
func (o *Output) WaitUntilSignalsAreHandled(t testing.TB) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		o.mu.Lock()
		readyAt := o.readyAt
		o.mu.Unlock()
		if !readyAt.IsZero() {
			time.Sleep(time.Until(readyAt.Add(signalGrace)))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector never logged %q:\n%s", readyLine, o)
			return
		}
	}
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// FreePort is a TCP port on 127.0.0.1 that nothing listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Launch runs binary with config (YAML text) and extra environment variables, and waits up to
// 20 s until readyPort on 127.0.0.1 accepts connections.
func Launch(t testing.TB, binary, config string, env []string, readyPort int) *Process {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Process{Output: new(Output)}
	p.Cmd = exec.Command(binary, "--config", path)
	p.Cmd.Env = append(os.Environ(), env...)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Output, p.Output
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Cmd.Process.Kill(); _ = p.Cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", readyPort)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return p
		}
	}
	t.Fatalf("collector did not start:\n%s", p.Output)
	return nil
}

// Metric sums a metric over its label sets from a collector's Prometheus endpoint at url; -1 if
// the endpoint cannot be read (the collector is not up yet, or was killed).
func Metric(url, name string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}
