// Command bigtrace sends one very large trace to an OTLP/HTTP endpoint as protobuf: -spans spans
// copied in turn from the traceloop fixture recording (one root, every other span its child),
// with random span ids, in requests of at most -per-request spans. With -attr-bytes each span
// also carries a gen_ai.prompt attribute of that many bytes (few spans near the request byte
// limit: -spans 4 -per-request 4 -attr-bytes 4800000 is one request of ~19 MiB, under the
// OTLP/HTTP receiver's default 20 MiB body limit). It prints the requests sent and their bytes.
// A 503 (the processor's back-pressure) is retried after a second, as an OTLP exporter would.
//
// It measures the collector's memory in scripts/big-trace-memory.sh.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func main() {
	fixtures := flag.String("fixtures", "testdata/otlp", "directory of the fixture recordings")
	spans := flag.Int("spans", 100000, "spans of the trace")
	perRequest := flag.Int("per-request", 1000, "most spans per request")
	attrBytes := flag.Int("attr-bytes", 0, "bytes of a gen_ai.prompt attribute added to every span (0: none)")
	endpoint := flag.String("endpoint", "http://127.0.0.1:4318", "OTLP/HTTP endpoint")
	seed := flag.Uint64("seed", 1, "seed of the random ids")
	flag.Parse()

	raw, err := os.ReadFile(filepath.Join(*fixtures, "traceloop", "traces.json"))
	if err != nil {
		log.Fatal(err)
	}
	tmpl, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil {
		log.Fatal(err)
	}
	rs := tmpl.ResourceSpans().At(0)
	var sources []ptrace.Span
	for _, ss := range rs.ScopeSpans().All() {
		for _, sp := range ss.Spans().All() {
			sources = append(sources, sp)
		}
	}
	rng := rand.New(rand.NewPCG(*seed, 0))
	var traceID pcommon.TraceID
	var rootID pcommon.SpanID
	fill(rng, traceID[:])
	fill(rng, rootID[:])
	prompt := strings.Repeat("a long prompt ", *attrBytes/14+1)[:*attrBytes]
	start := time.Now()
	requests, total := 0, 0
	for sent := 0; sent < *spans; {
		td := ptrace.NewTraces()
		rs.Resource().CopyTo(td.ResourceSpans().AppendEmpty().Resource())
		out := td.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
		rs.ScopeSpans().At(0).Scope().CopyTo(out.Scope())
		for n := 0; n < *perRequest && sent < *spans; n, sent = n+1, sent+1 {
			sp := out.Spans().AppendEmpty()
			sources[sent%len(sources)].CopyTo(sp)
			sp.SetTraceID(traceID)
			if sent == 0 {
				sp.SetSpanID(rootID)
				sp.SetParentSpanID(pcommon.SpanID{})
			} else {
				var id pcommon.SpanID
				fill(rng, id[:])
				sp.SetSpanID(id)
				sp.SetParentSpanID(rootID)
			}
			if *attrBytes > 0 {
				sp.Attributes().PutStr("gen_ai.prompt", prompt)
			}
		}
		body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			log.Fatal(err)
		}
		post(*endpoint, body)
		requests++
		total += len(body)
	}
	fmt.Printf("trace %s: %d spans in %d requests, %d bytes of protobuf, %s\n",
		traceID, *spans, requests, total, time.Since(start).Round(time.Millisecond))
}

func fill(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// post sends one request, retrying it while the collector answers 503 (back-pressure).
func post(endpoint string, body []byte) {
	for {
		resp, err := http.Post(endpoint+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			time.Sleep(time.Second)
		default:
			log.Fatalf("request of %d bytes: %s", len(body), resp.Status)
		}
	}
}
