package replaycaseprocessor

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
)

// failingLogsMarshaler is a logs marshaler that cannot encode.
type failingLogsMarshaler struct{ plog.ProtoMarshaler }

func (failingLogsMarshaler) MarshalLogs(plog.Logs) ([]byte, error) {
	return nil, errors.New("cannot encode")
}

// When a part of a case's raw telemetry cannot be encoded, the case keeps none of it (spans
// without their events would re-drive as a different run), and the drop is counted by part and
// logged with the case id, instead of writing a partial raw copy in silence.
func TestRawTelemetryThatCannotBeEncodedIsDroppedCountedAndLogged(t *testing.T) {
	prev := rawLogsMarshaler
	rawLogsMarshaler = failingLogsMarshaler{}
	t.Cleanup(func() { rawLogsMarshaler = prev })

	h := newHarness(t, func(c *Config) { c.RawSpans = rawAll })
	logs := h.observeDropLog()
	h.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
	h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
	h.advance(3 * time.Second)
	h.shutdown()

	cases := h.cases()
	require.Len(t, cases, 1, "the case itself is kept")
	assert.Zero(t, len(cases[0].RawSpans), "no partial raw copy")
	assert.Zero(t, len(cases[0].RawEvents))
	metadatatest.AssertEqualProcessorReplayCaseDroppedRawTelemetry(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("part", "events"))},
	}, metricdatatest.IgnoreTimestamp())
	lines := logs.FilterMessage("raw telemetry of a case dropped: it could not be encoded").All()
	require.Len(t, lines, 1)
	assert.Equal(t, cases[0].CaseID, lines[0].ContextMap()["case_id"])
	assert.Equal(t, "events", lines[0].ContextMap()["part"])
}
