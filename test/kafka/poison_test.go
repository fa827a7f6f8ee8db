package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reprise-dev/reprise/internal/testcollector"
)

// A record in the spans topic that is not OTLP protobuf (something else wrote to the topic)
// ahead of real runs: tier 2 skips it, logged and counted by the receiver, and the runs behind
// it become cases. With message_marking.on_permanent_error: false the partition was paused at
// that record for good, and every later run of it waited until Kafka's retention deleted it.
func TestARecordTier2CannotDecodeDoesNotStopItsPartition(t *testing.T) {
	c := newCluster(t, 1, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...))
	require.NoError(t, err)
	// A length-delimited field whose length never ends: no protobuf decoder accepts it.
	res := cl.ProduceSync(context.Background(), &kgo.Record{Topic: c.spansTopic, Value: []byte{0x0a, 0x80}})
	cl.Close()
	require.NoError(t, res.FirstErr())

	c.tier2[0].start(t)
	c.tier1.start(t)
	c.waitAligned(t)
	runs := makeRuns(t, 20)
	require.NoError(t, (&sender{url: c.otlp}).send(runs, 2), c.logs())
	waitForRuns(t, c.store, runs, 2*time.Minute, c.logs)
	assert.Equal(t, 1.0, testcollector.Metric(c.tier2[0].metrics, "otelcol_kafka_receiver_unmarshal_failed_spans"))
	assert.Contains(t, c.tier2[0].proc.Output.String(), "skipping due to message_marking config")
	for _, p := range append([]*collector{c.tier1}, c.tier2...) {
		p.stop(t)
	}
}
