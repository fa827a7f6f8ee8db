package replaycaseprocessor

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// tenantRecorder is a next consumer that records, for each case it is given, the client
// metadata ("tenant") of the context it was given with, as a headers_setter extension or an
// exporter batching by metadata_keys would read it.
type tenantRecorder struct {
	mu     sync.Mutex
	tenant map[string][]string // case's trace id -> tenants it was sent with
}

func (r *tenantRecorder) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r *tenantRecorder) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	cases, err := replaycase.Decode(td)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cases {
		r.tenant[c.Provenance.TraceID] = append(r.tenant[c.Provenance.TraceID], client.FromContext(ctx).Metadata.Get("tenant")...)
	}
	return nil
}

func withTenant(tenant string) context.Context {
	return client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(map[string][]string{"tenant": {tenant}})})
}

// Cases closed while a request is being handled (a limit closes them) are sent from inside that
// request's ConsumeTraces. They were sent with the request's context, so with its client
// metadata and auth: a case of tenant A, closed by tenant B's request, left with B's headers.
// A case belongs to no request: it is sent without client metadata, as the sweep sends.
func TestCasesAreNotSentWithAnotherRequestsClientMetadata(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxOpenTraces, c.EmitBatchSize = 1, 1 })
	next := &tenantRecorder{tenant: map[string][]string{}}
	h.p.nextTraces = next
	a, b := testfixtures.Traces(t, testfixtures.Traceloop), testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(a, plog.NewLogs(), 1)
	testfixtures.WithTraceID(b, plog.NewLogs(), 2)
	aID := a.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
	require.NoError(t, h.traces.ConsumeTraces(withTenant("A"), a))
	require.NoError(t, h.traces.ConsumeTraces(withTenant("B"), b)) // closes A's run: max_open_traces 1
	next.mu.Lock()
	defer next.mu.Unlock()
	require.Contains(t, next.tenant, aID, "A's case was sent while B's request was handled")
	assert.Empty(t, next.tenant[aID], "A's case was sent with the client metadata of another request")
}
