// Package kafka runs the scale-out setup of docs/scale-out.md as a user would: a real Apache
// Kafka broker (started by test/kafka/run.sh, which sets KAFKA_BROKERS), one tier-1 collector
// with config/tier1-kafka.yaml and tier-2 collectors with config/tier2-kafka.yaml, all real
// processes of the reprise binary built from this repository.
package kafka

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// binary is the collector under test: REPRISE_BIN, or built from the repository by TestMain.
var binary string

func TestMain(m *testing.M) {
	if os.Getenv("KAFKA_BROKERS") == "" {
		// Without a broker every test that needs one skips (see brokers); nothing to build. The
		// config checks use the collector scripts/test.sh built, when there is one.
		binary = os.Getenv("REPRISE_BIN")
		os.Exit(m.Run())
	}
	os.Exit(testcollector.Main(m, &binary))
}

// brokers is the broker list run.sh started, or skips the test.
func brokers(t *testing.T) string {
	b := os.Getenv("KAFKA_BROKERS")
	if b == "" {
		t.Skip("KAFKA_BROKERS not set: run test/kafka/run.sh, which starts a Kafka broker")
	}
	return b
}

// createTopics creates the spans and logs topics with the same number of partitions, the
// precondition for a trace id to map to the same partition number in both.
func createTopics(t *testing.T, brokerList string, partitions int32, topics ...string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokerList, ",")...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopics(ctx, partitions, 1, map[string]*string{"max.message.bytes": ptr("8388608")}, topics...)
	require.NoError(t, err)
	for _, r := range resp.Sorted() {
		require.NoError(t, r.Err, "creating topic %s", r.Topic)
	}
}

// groupLag is the sum over partitions of what the consumer group has not committed yet.
func groupLag(t *testing.T, brokerList, group string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokerList, ",")...))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lags, err := kadm.NewClient(cl).Lag(ctx, group)
	require.NoError(t, err)
	var sum int64
	for _, l := range lags {
		sum += l.Lag.Total()
	}
	return sum
}

func ptr[T any](v T) *T { return &v }

// collector is one reprise process running a shipped config with its environment.
type collector struct {
	name        string
	config      string // file name under config/
	env         []string
	metricsPort int
	metrics     string // Prometheus endpoint URL
	proc        *testcollector.Process
	done        chan struct{}
}

// start runs the collector and waits until its metrics endpoint accepts connections (the
// pipelines have started). It is killed when the test ends.
func (c *collector) start(t *testing.T) {
	t.Helper()
	config, err := os.ReadFile(filepath.Join(testcollector.RepoRoot(), "config", c.config))
	require.NoError(t, err)
	c.proc = testcollector.Launch(t, binary, string(config), c.env, c.metricsPort)
	c.done = make(chan struct{})
	cmd, done := c.proc.Cmd, c.done
	go func() { _ = cmd.Wait(); close(done) }()
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *collector) kill(t *testing.T) {
	require.NoError(t, c.proc.Cmd.Process.Kill())
	<-c.done
}

// stop sends SIGTERM and waits for a clean exit.
func (c *collector) stop(t *testing.T) {
	c.proc.Output.WaitUntilSignalsAreHandled(t)
	require.NoError(t, c.proc.Cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not stop:\n%s", c.name, c.proc.Output)
	}
}

// cluster is one tier-1 collector and n tier-2 collectors on fresh topics and groups, each
// tier-2 collector with a local folder of its own (as on separate hosts), all writing one
// dataset in one bucket of the S3 server run.sh started.
type cluster struct {
	brokers, group string
	spansTopic     string
	store          *dataset.ObjectStore
	tier1          *collector
	otlp           string // tier 1's OTLP/HTTP base URL
	tier2          []*collector
}

func newCluster(t *testing.T, tier2 int, partitions int32) *cluster {
	b := brokers(t)
	dir := t.TempDir()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano())
	spans, logs := "reprise_spans_"+suffix, "reprise_logs_"+suffix
	createTopics(t, b, partitions, spans, logs)
	c := &cluster{brokers: b, group: "reprise-" + suffix, spansTopic: spans}
	endpoint, bucket, _ := testfixtures.S3Bucket(t)
	s3URL := "s3://" + bucket + "/datasets"
	var err error
	c.store, err = dataset.NewObjectStore(context.Background(), dataset.ObjectStoreConfig{URL: s3URL, Endpoint: endpoint, PathStyle: true})
	require.NoError(t, err)
	common := []string{"KAFKA_BROKERS=" + b, "REPRISE_SPANS_TOPIC=" + spans, "REPRISE_LOGS_TOPIC=" + logs, "REPRISE_SCRUB_KEY=kafka-e2e-key",
		"REPRISE_S3_URL=" + s3URL, "REPRISE_S3_ENDPOINT=" + endpoint, "REPRISE_S3_PATH_STYLE=true"}

	otlpPort, grpcPort, metricsPort := testcollector.FreePort(t), testcollector.FreePort(t), testcollector.FreePort(t)
	c.otlp = fmt.Sprintf("http://127.0.0.1:%d", otlpPort)
	c.tier1 = &collector{
		name: "tier1", config: "tier1-kafka.yaml", metricsPort: metricsPort,
		metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		env: append(common,
			"REPRISE_STATE_DIR="+filepath.Join(dir, "tier1-state"),
			fmt.Sprintf("OTLP_HTTP_ENDPOINT=127.0.0.1:%d", otlpPort),
			fmt.Sprintf("OTLP_GRPC_ENDPOINT=127.0.0.1:%d", grpcPort),
			fmt.Sprintf("METRICS_PORT=%d", metricsPort)),
	}
	for i := range tier2 {
		name := fmt.Sprintf("tier2-%c", 'a'+i)
		port := testcollector.FreePort(t)
		c.tier2 = append(c.tier2, &collector{
			name: name, config: "tier2-kafka.yaml", metricsPort: port,
			metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", port),
			env: append(append([]string{}, common...),
				"REPRISE_INSTANCE="+name,
				"REPRISE_GROUP="+c.group,
				"REPRISE_STATE_DIR="+filepath.Join(dir, name+"-state"),
				"REPRISE_DATA_DIR="+filepath.Join(dir, name+"-data"),
				fmt.Sprintf("METRICS_PORT=%d", port)),
		})
	}
	return c
}

// lag is what the tier-2 groups (spans and logs) have not committed.
func (c *cluster) lag(t *testing.T) int64 {
	return groupLag(t, c.brokers, c.group+"-spans") + groupLag(t, c.brokers, c.group+"-logs")
}

// assignment is, per consumer group, which instance holds each partition number (its topic
// aside): "a:0,1 b:2,3 c:4,5".
func (c *cluster) assignment(t *testing.T, group string) (string, int) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	described, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil { // e.g. the coordinator of a new broker is not available yet: ask again
		return group + ": " + err.Error(), 0
	}
	g := described[group]
	if g.State != "Stable" {
		return group + " " + g.State, len(g.Members)
	}
	var parts []string
	for _, m := range g.Members { // sorted by instance id
		a, ok := m.Assigned.AsConsumer()
		if !ok || m.InstanceID == nil {
			return group + " has a member that is not a static consumer", len(g.Members)
		}
		var ps []string
		for _, tp := range a.Topics {
			for _, p := range tp.Partitions {
				ps = append(ps, fmt.Sprint(p))
			}
		}
		parts = append(parts, *m.InstanceID+":"+strings.Join(ps, ","))
	}
	return strings.Join(parts, " "), len(g.Members)
}

// waitAligned waits until both groups are stable with every tier-2 collector as a member and
// give each partition number of both topics to the same collector, and returns that mapping.
func (c *cluster) waitAligned(t *testing.T) string {
	deadline := time.Now().Add(90 * time.Second)
	for {
		spans, n := c.assignment(t, c.group+"-spans")
		logs, m := c.assignment(t, c.group+"-logs")
		if spans == logs && n == len(c.tier2) && m == len(c.tier2) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer groups not aligned: spans %q (%d members), logs %q (%d members)", spans, n, logs, m)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitClosed waits until no tier-2 collector holds an open case, so that every span and event
// consumed is in a row (or on its way through the exporter's flush).
func (c *cluster) waitClosed(t *testing.T, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		open := 0.0
		for _, p := range c.tier2 {
			open += testcollector.Metric(p.metrics, "otelcol_processor_replay_case_open_cases")
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%.0f cases still open after %s", open, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
