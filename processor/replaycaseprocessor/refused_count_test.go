package replaycaseprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
)

// A request refused because it cannot be stored is counted in refused with every item it held:
// the GenAI events taken out of the request for their traces count too (they were counted
// after being taken out, so a request of GenAI events alone counted 0).
func TestStorageFailureCountsEveryRefusedItem(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Storage = &storageID })
	host := storageHost{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{storageID: failingStorage{}}}
	require.NoError(t, h.traces.Start(context.Background(), host))
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	spans, events := td.SpanCount(), ld.LogRecordCount()
	require.Error(t, h.traces.ConsumeTraces(context.Background(), td))
	require.Error(t, h.logs.ConsumeLogs(context.Background(), ld))
	metadatatest.AssertEqualProcessorReplayCaseRefused(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: int64(spans), Attributes: signal("traces")},
		{Value: int64(events), Attributes: signal("logs")},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}
