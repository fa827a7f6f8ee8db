// Package scrubbing plants secrets and personal data in real fixture runs and checks that none
// of them reaches the processor's output or any byte under the dataset root.
package scrubbing

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/replayext"
	"github.com/reprise-dev/reprise/scrub"
)

// planted: 20 built-in kinds plus a secret JSON key, each planted once. secret is the byte
// string that must not survive (for some kinds a part of the planted text).
var planted = []struct{ kind, text, secret string }{
	{"openai_api_key", "sk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE", ""},
	{"anthropic_api_key", "sk-ant-api03-Zp8Lm2Qw9Rt4Yx7Vb1Nc3Kd6Fg0Hj5", ""},
	{"google_api_key", "AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z", ""},
	{"aws_access_key_id", "AKIAIOSFODNN7EXAMPLQ", ""},
	{"github_token", "ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU", ""},
	{"gitlab_token", "glpat-Ab3De6Gh9Jk2Mn5Pq8St", ""},
	{"slack_token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", ""},
	{"stripe_secret_key", "sk_live_51HxYzAbCdEfGhIjKlMnOpQr", ""},
	{"sendgrid_api_key", "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", ""},
	{"npm_token", "npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", ""},
	{"huggingface_token", "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", ""},
	{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.c2lnbmF0dXJlLXZhbHVlLTEyMzQ", ""},
	{"bearer_token", "Bearer Zm9vYmFyLXRva2VuLTEyMzQ1Njc4OTA", "Zm9vYmFyLXRva2VuLTEyMzQ1Njc4OTA"},
	{"basic_auth", "Basic YWxpY2U6czNjcjN0LXBhc3M=", "YWxpY2U6czNjcjN0LXBhc3M="},
	{"pem_private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn"},
	{"url_password", "postgres://app:Sup3rS3cretPw@db.internal:5432/prod", "Sup3rS3cretPw"},
	{"email", "jane.doe@example-corp.com", ""},
	{"phone_number", "+1 415-555-0132", "415-555-0132"},
	{"payment_card", "4111 1111 1111 1111", ""},
	{"iban", "DE89 3704 0044 0532 0130 00", ""},
	{scrub.KindSecretField, "hunter2-planted-password", ""},
}

func secretOf(i int) string {
	if planted[i].secret != "" {
		return planted[i].secret
	}
	return planted[i].text
}

func text(kind string) string {
	for _, p := range planted {
		if p.kind == kind {
			return p.text
		}
	}
	panic(kind)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// plantedRun is the otel-events run with every planted value in a prompt, a tool argument, a
// tool result, a retrieval document, a span or event attribute, or a resource attribute.
func plantedRun(t *testing.T) (ptrace.Traces, plog.Logs) {
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	res := td.ResourceSpans().At(0).Resource().Attributes()
	res.PutStr("deployment.note", "billing uses "+text("stripe_secret_key"))
	res.PutStr("db.connection_string", text("url_password"))
	for i := 0; i < td.ResourceSpans().At(0).ScopeSpans().Len(); i++ {
		spans := td.ResourceSpans().At(0).ScopeSpans().At(i).Spans()
		for k := 0; k < spans.Len(); k++ {
			sp := spans.At(k)
			a := sp.Attributes()
			switch sp.Name() {
			case "invoke_agent weather-bot":
				a.PutStr("app.note", "escalate via "+text("slack_token"))
				ev := sp.Events().AppendEmpty()
				ev.SetName("auth.retry")
				ev.Attributes().PutStr("detail", "header was "+text("basic_auth"))
			case "execute_tool get_weather":
				a.PutStr("gen_ai.tool.call.arguments", jsonText(map[string]any{
					"city": "Paris", "unit": "celsius", "hint": text("google_api_key"), "card": text("payment_card"), "password": text(scrub.KindSecretField)}))
				a.PutStr("gen_ai.tool.call.result", jsonText(map[string]any{
					"city": "Paris", "temperature": 14, "unit": "celsius", "sky": "overcast", "source_key": text("aws_access_key_id"), "billing_iban": text("iban")}))
				a.PutStr("app.forwarded", text("bearer_token"))
			case "retrieval kb":
				a.PutStr("retrieval.documents.0.document.content", "Paris has a temperate oceanic climate. CI token "+text("github_token"))
				a.PutStr("retrieval.documents.1.document.content", "Use get_weather(city, unit). Deploy key "+text("gitlab_token"))
				a.PutStr("input.value", "What is the weather in Paris today? session "+text("jwt"))
			}
		}
	}
	first, second := "52f9b6ad1109142e", "5bd657a3817bfe47"
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < lrs.Len(); i++ {
		lr := lrs.At(i)
		body := lr.Body().Map()
		content, _ := body.Get("content")
		switch span, name := lr.SpanID().String(), testEventName(lr); {
		case span == first && name == "gen_ai.system.message":
			body.PutStr("content", content.Str()+" Escalations: "+text("anthropic_api_key")+" or call "+text("phone_number"))
		case span == first && name == "gen_ai.user.message":
			body.PutStr("content", content.Str()+" My key is "+text("openai_api_key")+", mail me at "+text("email"))
		case span == second && name == "gen_ai.user.message":
			body.PutStr("content", content.Str()+"\n"+text("pem_private_key"))
		case span == second && name == "gen_ai.tool.message":
			body.PutStr("content", content.Str()+" relay "+text("sendgrid_api_key"))
		case span == second && name == "gen_ai.assistant.message":
			fn := body.PutEmptyMap("x_note")
			fn.PutStr("text", "registry "+text("huggingface_token"))
		case span == second && name == "gen_ai.choice":
			msg, _ := body.Get("message")
			c, _ := msg.Map().Get("content")
			msg.Map().PutStr("content", c.Str()+" (publish with "+text("npm_token")+")")
		}
	}
	return td, ld
}

func testEventName(lr plog.LogRecord) string {
	v, _ := lr.Attributes().Get("event.name")
	return v.Str()
}

func processorConfig() *replaycaseprocessor.Config {
	cfg := replaycaseprocessor.NewFactory().CreateDefaultConfig().(*replaycaseprocessor.Config)
	cfg.RawSpans = "all" // raw spans of accepted cases are checked too
	cfg.Scrub.Key = "planted-secrets-test-key"
	return cfg
}

// run sends td and ld through a processor into next and returns once every case is emitted.
func run(t *testing.T, cfg *replaycaseprocessor.Config, next consumer.Traces, td ptrace.Traces, ld plog.Logs) *consumertest.LogsSink {
	f := replaycaseprocessor.NewFactory()
	set := processortest.NewNopSettings(f.Type())
	logsOut := new(consumertest.LogsSink)
	tp, err := f.CreateTraces(context.Background(), set, cfg, next)
	require.NoError(t, err)
	lp, err := f.CreateLogs(context.Background(), set, cfg, logsOut)
	require.NoError(t, err)
	require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
	require.NoError(t, tp.ConsumeTraces(context.Background(), td))
	require.NoError(t, tp.Shutdown(context.Background()))
	require.NoError(t, lp.Shutdown(context.Background()))
	return logsOut
}

func TestPlantedSecretsNeverReachTheDataset(t *testing.T) {
	require.GreaterOrEqual(t, len(planted), 21)
	td, ld := plantedRun(t)
	// Sanity: the planted bytes are really in the input.
	in, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	inLogs, _ := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	for i := range planted {
		assert.True(t, strings.Contains(string(in)+string(inLogs), jsonEscape(secretOf(i))), planted[i].kind)
	}

	root := filepath.Join(t.TempDir(), "reprise-data")
	exp, sink, tee := datasetWriter(t, root, "none") // uncompressed, so the bytes on disk can be searched
	run(t, processorConfig(), tee, td, ld)
	// A second run, quarantined (no content recorded), with secrets in its resource and a tool
	// argument: the quarantine dataset and its raw spans are checked too.
	qtd, qld := testfixtures.Traces(t, testfixtures.OTelNoContent), testfixtures.Logs(t, testfixtures.OTelNoContent)
	qtd.ResourceSpans().At(0).Resource().Attributes().PutStr("deployment.owner", text("email"))
	qspans := qtd.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < qspans.Len(); i++ {
		if qspans.At(i).Name() == "execute_tool get_weather" {
			qspans.At(i).Attributes().PutStr("gen_ai.tool.call.arguments", jsonText(map[string]any{"city": "Paris", "token": text("npm_token")}))
		}
	}
	run(t, processorConfig(), tee, qtd, qld)
	require.NoError(t, exp.Shutdown(context.Background()))

	// The processor's output, as protobuf and as JSON.
	var output []byte
	for _, out := range sink.AllTraces() {
		pb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(out)
		js, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(out)
		output = append(append(output, pb...), js...)
	}
	cases, err := replaycase.Decode(sink.AllTraces()[0])
	require.NoError(t, err)
	require.Len(t, cases, 1)
	c := cases[0]
	require.NotEmpty(t, c.RawSpans)
	output = append(append(output, c.RawSpans...), c.RawEvents...)
	quarantined, err := replaycase.Decode(sink.AllTraces()[1])
	require.NoError(t, err)
	require.Equal(t, replaycase.StatusQuarantined, quarantined[0].Status)
	assert.Equal(t, map[string]int64{"email": 1, scrub.KindSecretField: 1}, quarantined[0].Scrub.Counts, "the token key masks the whole value")
	output = append(output, quarantined[0].RawSpans...)

	// Every byte under the dataset root and its staging directory.
	var disk []byte
	files := 0
	for _, dir := range []string{root, root + ".staging"} {
		require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			files++
			disk = append(disk, b...)
			return err
		}))
	}
	require.GreaterOrEqual(t, files, 3, "cases/, steps/ and quarantine/")
	require.DirExists(t, filepath.Join(root, "quarantine"))
	require.Contains(t, string(disk), "Answer #2: based on", "the files are searchable (uncompressed)")
	require.Contains(t, string(disk), "<secret:openai_api_key:", "the placeholders are there")

	for i, p := range planted {
		s := secretOf(i)
		assert.False(t, bytes.Contains(output, []byte(s)) || bytes.Contains(output, []byte(jsonEscape(s))), "%s in the processor output", p.kind)
		assert.False(t, bytes.Contains(disk, []byte(s)) || bytes.Contains(disk, []byte(jsonEscape(s))), "%s under the dataset root", p.kind)
	}

	want := map[string]int64{}
	for _, p := range planted {
		want[p.kind] = 1
	}
	assert.Equal(t, want, c.Scrub.Counts, "one of each kind was planted")
	assert.Len(t, c.Scrub.PolicyHash, 16)
	assert.Equal(t, replaycase.StatusAccepted, c.Status, "every kind masks by default")
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func TestQuarantineActionQuarantinesAndStillMasks(t *testing.T) {
	td, ld := plantedRun(t)
	cfg := processorConfig()
	cfg.Scrub.Detectors = map[string]string{"payment_card": scrub.ActionQuarantine}
	sink := new(consumertest.TracesSink)
	run(t, cfg, sink, td, ld)
	cases, err := replaycase.Decode(sink.AllTraces()[0])
	require.NoError(t, err)
	c := cases[0]
	assert.Equal(t, replaycase.StatusQuarantined, c.Status)
	require.True(t, c.HasReason(replaycase.ReasonSecretDetected))
	assert.Contains(t, c.Reasons[0].Detail, "payment_card")
	pb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(sink.AllTraces()[0])
	assert.NotContains(t, string(pb), "4111 1111 1111 1111")
}

// The reference runs and fixtures are ordinary agent telemetry: this lists what the default
// policy scrubs there.
func TestNoFalsePositivesOnOrdinaryTelemetry(t *testing.T) {
	s, err := scrub.New(scrub.DefaultConfig())
	require.NoError(t, err)
	found := map[string]map[string]int64{}
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.OTelNoContent, testfixtures.Traceloop, testfixtures.OpenInference} {
		var r scrub.Report
		s.Traces(testfixtures.Traces(t, run), &r)
		s.Logs(testfixtures.Logs(t, run), &r)
		if len(r.Counts) > 0 {
			found[run] = r.Counts
		}
	}
	// Ordinary code: this repository's own Go sources (not the tests, which plant secrets, nor
	// the detectors themselves).
	sources, err := filepath.Glob(filepath.Join(testfixtures.Dir(), "..", "..", "*", "*.go"))
	require.NoError(t, err)
	code := 0
	for _, f := range sources {
		if strings.HasSuffix(f, "_test.go") || strings.Contains(f, string(filepath.Separator)+"scrub"+string(filepath.Separator)) {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		code++
		var r scrub.Report
		s.Text(string(b), &r)
		if len(r.Counts) > 0 {
			found[filepath.Base(f)] = r.Counts
		}
	}
	require.Greater(t, code, 20)
	refs, err := filepath.Glob(filepath.Join(testfixtures.Dir(), "..", "reference", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, refs)
	for _, f := range refs {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var r scrub.Report
		var doc any
		require.NoError(t, json.Unmarshal(b, &doc))
		s.JSON(doc, &r)
		if len(r.Counts) > 0 {
			found[filepath.Base(f)] = r.Counts
		}
	}
	var names []string
	for n := range found {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("scrubbed in %s: %v", n, found[n])
	}
	assert.Equal(t, expectedInReferences, found)
}

// expectedInReferences is what the default policy scrubs in the fixtures and reference runs,
// each justified. Nothing in the four OTLP fixture runs; in the reference runs one value:
var expectedInReferences = map[string]map[string]int64{
	// The Langfuse trace's userId is "user@langfuse.com": a real e-mail address, rightly masked.
	"otel-genai-deprecated-events_pydantic-ai-0.2-events-attribute.langfuse-export.json": {"email": 1},
}

// A recording scrubbed with the policy replays to a live request that carries the real secret.
func TestScrubbedRecordingReplaysToTheRealSecret(t *testing.T) {
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	key := text("openai_api_key")
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < lrs.Len(); i++ {
		if testEventName(lrs.At(i)) == "gen_ai.user.message" {
			body := lrs.At(i).Body().Map()
			body.PutStr("content", "What is the weather in Paris today? My key is "+key)
		}
	}
	root := filepath.Join(t.TempDir(), "reprise-data")
	exp, sink, tee := datasetWriter(t, root, "zstd")
	pcfg := processorConfig()
	run(t, pcfg, tee, td, ld)
	require.NoError(t, exp.Shutdown(context.Background()))
	cases, _ := replaycase.Decode(sink.AllTraces()[0])
	require.NotContains(t, cases[0].InputMessages[1].Parts[0].Content, key)

	xf := replayext.NewFactory()
	xcfg := xf.CreateDefaultConfig().(*replayext.Config)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	xcfg.Directory, xcfg.NetAddr.Endpoint, xcfg.Scrub = root, addr, pcfg.Scrub
	ext, err := xf.Create(context.Background(), extensiontest.NewNopSettings(xf.Type()), xcfg)
	require.NoError(t, err)
	host := componenttest.NewNopHost()
	require.NoError(t, ext.Start(context.Background(), host))
	defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()

	request := map[string]any{
		"model": "gpt-4o-mini", "temperature": 0.2, "max_tokens": 256,
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a weather assistant. Context:\nParis has a temperate oceanic climate.\nUse get_weather(city, unit) for live conditions."},
			map[string]any{"role": "user", "content": "What is the weather in Paris today? My key is " + key},
		},
	}
	body, _ := json.Marshal(request)
	resp, err := http.Post("http://"+addr+"/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the live request with the real secret matches its scrubbed recording")
}

// datasetWriter is a replay_parquet exporter into root (synchronous: files are published when
// ConsumeTraces returns) and a consumer that feeds it and a sink.
func datasetWriter(t *testing.T, root, compression string) (exporter.Traces, *consumertest.TracesSink, consumer.Traces) {
	exp := testdataset.Writer(t, root, compression)
	sink := new(consumertest.TracesSink)
	tee, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		require.NoError(t, sink.ConsumeTraces(ctx, td))
		return exp.ConsumeTraces(ctx, td)
	})
	require.NoError(t, err)
	return exp, sink, tee
}
