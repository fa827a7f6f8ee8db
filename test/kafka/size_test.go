package kafka

import (
	"bytes"
	"crypto/rand"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// oneTraceRequest is a fixture run under a random trace id, as one OTLP/protobuf traces request
// of about size bytes (an attribute of its first span pads it): one Kafka record at tier 1.
func oneTraceRequest(t *testing.T, size int) []byte {
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	var id pcommon.TraceID
	_, _ = rand.Read(id[:])
	setTraceID(td, plog.NewLogs(), id)
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("padding", strings.Repeat("x", size-len(body)-16))
	body, err = ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	require.InDelta(t, size, len(body), 64)
	return body
}

// The kafka exporter refuses for good a record above its max_message_bytes (8 MiB), after tier 1
// has answered the agent 200. So tier 1 refuses a request that could not be one record: the
// agent gets an error it sees (400). A request just under the limit is one record Kafka takes. Before
// 2026-12-05 tier 1 took requests up to confighttp's default 20 MiB, and one trace of 8–20 MiB
// was answered 200 and then dropped (counted in otelcol_exporter_send_failed_spans).
func TestTier1RefusesARequestLargerThanARecord(t *testing.T) {
	c := newCluster(t, 0, 1)
	c.tier1.start(t)
	require.Eventually(t, func() bool { // its metrics serve before its receivers listen
		conn, err := net.Dial("tcp", strings.TrimPrefix(c.otlp, "http://"))
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond)
	post := func(body []byte) int {
		resp, err := http.Post(c.otlp+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	// The OTLP receiver answers 400 (it could not read the body whole); the point is that the
	// agent's exporter is told, as it is not after a 200.
	code := post(oneTraceRequest(t, 8_500_000))
	assert.True(t, code >= 400 && code < 500, "8.5 MB, more than one record holds: status %d", code)

	under := oneTraceRequest(t, 7_990_000)
	require.Equal(t, http.StatusOK, post(under), "just under the limit")
	require.Eventually(t, func() bool {
		return testcollector.Metric(c.tier1.metrics, "otelcol_exporter_sent_spans") > 0 ||
			testcollector.Metric(c.tier1.metrics, "otelcol_exporter_send_failed_spans") > 0
	}, time.Minute, 100*time.Millisecond, "the exporter sent or refused the record")
	assert.Zero(t, testcollector.Metric(c.tier1.metrics, "otelcol_exporter_send_failed_spans"), "Kafka took the record:\n%s", c.tier1.proc.Output)
	assert.Positive(t, testcollector.Metric(c.tier1.metrics, "otelcol_exporter_sent_spans"))
	c.tier1.stop(t)
}
