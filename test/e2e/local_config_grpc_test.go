package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A request of three good runs and one with a 10 MB attribute is taken over OTLP/HTTP with the
// local defaults (20 MiB, confighttp's default body limit); over gRPC the receiver's default
// message limit of 4 MiB refused it whole with RESOURCE_EXHAUSTED, which an OTLP exporter does
// not retry: the good runs beside the large one were lost on one protocol and not the other.
func TestLocalConfigTakesOverGRPCARequestItTakesOverHTTP(t *testing.T) {
	t.Setenv("REPRISE_SCRUB_KEY", "e2e-key")
	cfg, httpPort, grpcPort := localConfig(t, t.TempDir())
	c := launch(t, cfg, httpPort)
	req := ptrace.NewTraces()
	for i := 0; i < 4; i++ {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		if i == 3 {
			td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("padding", strings.Repeat("x", 10_000_000))
		}
		td.ResourceSpans().MoveAndAppendTo(req.ResourceSpans())
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(req).MarshalProto()
	require.NoError(t, err)
	postOTLP(t, c.otlp, "traces", body) // requires 200

	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", grpcPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(req), grpc.MaxCallSendMsgSize(64<<20))
	assert.NoError(t, err, "the same request over gRPC")
	c.stop(t)
}
