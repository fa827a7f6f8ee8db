package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
)

// Workers taking ports at the same time never hold the same port at once, although the kernel
// offers a port again as soon as its probe listener is closed (here: it cycles through 24).
func TestPortPoolNeverGivesTwoWorkersOnePort(t *testing.T) {
	pool := newPortPool()
	var offered atomic.Int32
	pool.listen = func() (net.Listener, error) {
		return addrListener{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000 + int(offered.Add(1)%24)}}, nil
	}
	var mu sync.Mutex
	inUse := map[int]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				ports, err := pool.take(2)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				for _, p := range ports {
					assert.False(t, inUse[p], "port %d given to two workers", p)
					inUse[p] = true
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				for _, p := range ports {
					delete(inUse, p)
				}
				mu.Unlock()
				pool.release(ports)
			}
		}()
	}
	wg.Wait()
}

// addrListener is a listener that only reports an address: the kernel "offering" a port.
type addrListener struct{ addr net.Addr }

func (l addrListener) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (l addrListener) Close() error              { return nil }
func (l addrListener) Addr() net.Addr            { return l.addr }

// A port taken between being picked and being bound (here by a server of the test) makes the
// collector fail to bind it; the harness starts again on fresh ports and never takes the other
// server for its own.
func TestHarnessStartsAgainWhenAPickedPortIsTaken(t *testing.T) {
	Factories = testFactories
	var hits atomic.Int32
	other := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) })}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = other.Serve(taken) }()
	defer other.Close()

	prev := harnessPorts
	harnessPorts = newPortPool()
	t.Cleanup(func() { harnessPorts = prev })
	offered := 0
	listen := harnessPorts.listen
	harnessPorts.listen = func() (net.Listener, error) {
		if offered++; offered == 2 { // the OTLP port of the first attempt
			return addrListener{taken.Addr()}, nil
		}
		return listen()
	}

	root, _ := fixtureDataset(t, testfixtures.OTelEvents)
	runs := t.TempDir()
	stop, replayPort, otlpPort, err := startHarnessOnFreePorts(context.Background(), filepath.Join(t.TempDir(), "collector.yaml"), Factories, func(replayPort, otlpPort int) string {
		return fmt.Sprintf(harnessConfig, replayPort, root, "strict", otlpPort, runs, "", "REPRISE_SCRUB_KEY", "replay_parquet", "", "run-1")
	})
	require.NoError(t, err)
	defer stop()
	assert.Greater(t, offered, 2, "a second attempt picked fresh ports")
	assert.NotEqual(t, taken.Addr().(*net.TCPAddr).Port, otlpPort)
	assert.NotEqual(t, replayPort, otlpPort)

	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/v1/traces", otlpPort), "application/json", bytes.NewReader([]byte(`{}`)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the harness's own OTLP receiver answers")
	assert.Zero(t, hits.Load(), "nothing was sent to the server that holds the taken port")
}

// `reprise ci -j 8` replays eight cases at once, each through its own collector: every run
// reaches its own harness (a run sent to another worker's collector would leave one case with
// no run and another with two).
func TestCIRunsCasesInParallelEachInItsOwnHarness(t *testing.T) {
	Factories = testFactories
	const n = 8
	root := t.TempDir()
	w := testdataset.Writer(t, root, "zstd")
	runs, traces := make([]string, n), make([]ptrace.Traces, n)
	for i := range runs {
		runs[i], traces[i] = testfixtures.OTelEvents, testfixtures.Traces(t, testfixtures.OTelEvents)
		testfixtures.WithTraceID(traces[i], plog.NewLogs(), i+1)
	}
	require.Len(t, testpipeline.RunTraces(t, w, runs, traces), n)
	require.NoError(t, w.Shutdown(context.Background()))
	repo := filepath.Join(testfixtures.Dir(), "..", "..")
	t.Setenv("REQUEST", filepath.Join(repo, "testdata", "requests", "weather-first-call.json"))
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	report := filepath.Join(t.TempDir(), "report.json")

	code, _, errOut := run(t, "ci", "--dataset", root, "-j", "8", "--json", report, "--", "sh", "-c", replayAgent)
	require.Equal(t, ExitOK, code, errOut)
	rep := readCIReport(t, report)
	require.Len(t, rep.Results, n)
	for _, r := range rep.Results {
		assert.Equal(t, outcomePassed, r.Outcome, "%s: %s", r.CaseID, r.Message)
	}
}
