// Package scrubbing plants secrets and personal data in real fixture runs and checks that none
// of them reaches the processor's output or any byte under the dataset root.
package scrubbing

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/replayext"
	"github.com/reprise-dev/reprise/scrub"
	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// planted is every kind the scrubber must catch (scrub/scrubtest) plus the shapes a walker can
// miss: secrets under key names with no known value shape, an e-mail used as a JSON key,
// base64 JSON, NDJSON, a Python dict, keys and numbers touching URL punctuation or '_', an IPv6
// address before a colon, and a credential split over two fields or two list items.
var planted = append(append([]scrubtest.Value{}, scrubtest.Planted...), []scrubtest.Value{
	{Kind: scrub.KindSecretField, Text: `{"DB_PASSWORD":"hunter2-planted-password"}`, Secret: "hunter2-planted-password"},
	{Kind: scrub.KindSecretField, Text: `{"passphrase":"planted-passphrase-1"}`, Secret: "planted-passphrase-1"},
	{Kind: scrub.KindSecretField, Text: `{"connection_string":"Server=x;Pwd=planted-conn-pw"}`, Secret: "Server=x;Pwd=planted-conn-pw"},
	{Kind: scrub.KindSecretField, Text: `{"aws_secret_access_key":"Pl4ntedAwsSecretNoPrefixValue0123456789ab"}`, Secret: "Pl4ntedAwsSecretNoPrefixValue0123456789ab"},
	{Kind: scrub.KindSecretField, Text: "OPENAI_API_KEY=planted-env-value-9\n", Secret: "planted-env-value-9"},
	{Kind: scrub.KindSecretField, Text: `{'user': 'bob', 'db_password': 'planted-pydict-pw'}`, Secret: "planted-pydict-pw"},
	{Kind: scrub.KindSecretField, Text: "{\"a\":1}\n{\"secret\":\"planted-ndjson-secret\"}", Secret: "planted-ndjson-secret"},
	{Kind: scrub.KindSecretField, Text: "payload " + base64.StdEncoding.EncodeToString([]byte(`{"password":"planted-b64-pw"}`)), Secret: base64.StdEncoding.EncodeToString([]byte(`{"password":"planted-b64-pw"}`))},
	{Kind: "email", Text: `{"planted.key@example-corp.com":{"role":"admin"}}`, Secret: "planted.key@example-corp.com"},
	{Kind: "gcp_api_key", Text: "https://maps.example.com/v1/AIzaSyPl4ntedUrlPathKey0123456789abcdEF/geocode", Secret: "AIzaSyPl4ntedUrlPathKey0123456789abcdEF"},
	{Kind: "payment_card", Text: "order_id_4012888888881881", Secret: "4012888888881881"},
	{Kind: "ip_address", Text: "peer 2001:db8:85a3::8a2e:370:7335: refused", Secret: "2001:db8:85a3::8a2e:370:7335"},
}...)

// splitParts is a credential split over two sibling values; neither part matches alone.
var splitParts = [2]string{"sk-proj-Pl4ntedSpl1t", "PartTw0Xq3vT8pL2mN9rB"}

// listParts is a credential split over two neighbouring items of one list.
var listParts = [2]string{"sk-proj-Pl4ntedL1st", "ItemTw0Zq9vT8pL2mN9rC"}

// partsPlanted are the parts of the split credentials, each of which must not survive.
func partsPlanted() []scrubtest.Value {
	var out []scrubtest.Value
	for _, part := range append(splitParts[:], listParts[:]...) {
		out = append(out, scrubtest.Value{Kind: "split", Text: part})
	}
	return out
}

// allPlanted is every planted text, one per line, the value without an END line last.
func allPlanted() string {
	var texts []string
	for _, p := range planted {
		if !strings.Contains(p.Text, "OPENSSH") {
			texts = append(texts, p.Text)
		}
	}
	for _, p := range planted {
		if strings.Contains(p.Text, "OPENSSH") {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// plantRecord puts every planted value into a map of attributes (or a log body) as string,
// bytes, array and map values, a card number as an int and a double, and the split credential.
func plantRecord(m pcommon.Map, prefix string) {
	all := allPlanted()
	m.PutStr(prefix+"note", all)
	m.PutEmptyBytes(prefix + "blob").FromRaw([]byte(all))
	m.PutEmptySlice(prefix + "list").AppendEmpty().SetStr(all)
	m.PutEmptyMap(prefix+"nested").PutStr("text", all)
	m.PutInt(prefix+"card_number", 4111111111111111)
	m.PutDouble(prefix+"card_double", 5500000000000004)
	m.PutStr(prefix+"key_part_1", splitParts[0])
	m.PutStr(prefix+"key_part_2", splitParts[1])
	parts := m.PutEmptySlice(prefix + "key_parts")
	parts.AppendEmpty().SetStr(listParts[0])
	parts.AppendEmpty().SetStr(listParts[1])
}

// plantedRun is the otel-events run with every planted value in every location: prompts, a
// system message, tool arguments and results, retrieval documents, span, event, link,
// resource and scope attributes, span, event and scope names, and log bodies of several types.
func plantedRun(t *testing.T) (ptrace.Traces, plog.Logs) {
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	all := allPlanted()
	rs := td.ResourceSpans().At(0)
	plantRecord(rs.Resource().Attributes(), "deployment.")
	for i := 0; i < rs.ScopeSpans().Len(); i++ {
		plantRecord(rs.ScopeSpans().At(i).Scope().Attributes(), "scope.")
		spans := rs.ScopeSpans().At(i).Spans()
		for k := 0; k < spans.Len(); k++ {
			sp := spans.At(k)
			a := sp.Attributes()
			switch sp.Name() {
			case "invoke_agent weather-bot":
				plantRecord(a, "app.")
				ev := sp.Events().AppendEmpty()
				ev.SetName("auth.retry " + all)
				plantRecord(ev.Attributes(), "")
				link := sp.Links().AppendEmpty()
				link.SetTraceID(sp.TraceID())
				link.SetSpanID(sp.SpanID())
				plantRecord(link.Attributes(), "")
			case "execute_tool get_weather":
				a.PutStr("gen_ai.tool.call.arguments", jsonText(map[string]any{"city": "Paris", "unit": "celsius", "hint": all, "card": 4111111111111111, "password": "planted-arg-password"}))
				a.PutStr("gen_ai.tool.call.result", jsonText(map[string]any{"city": "Paris", "temperature": 14, "unit": "celsius", "sky": "overcast", "details": all, "key_part_1": splitParts[0], "key_part_2": splitParts[1], "key_parts": []any{listParts[0], listParts[1]}}))
			case "retrieval kb":
				a.PutStr("retrieval.documents.0.document.content", "Paris has a temperate oceanic climate. "+all)
				a.PutStr("input.value", "What is the weather in Paris today? "+all)
			}
		}
	}
	// A scope and a span whose names carry the secrets.
	extra := rs.ScopeSpans().AppendEmpty()
	extra.Scope().SetName("planted.scope " + all)
	extra.Scope().SetVersion("1.0")
	sp := extra.Spans().AppendEmpty()
	rs.ScopeSpans().At(0).Spans().At(0).CopyTo(sp)
	sp.SetName("planted.span " + all)
	sp.SetSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
	sp.Attributes().Clear()

	first, second := "52f9b6ad1109142e", "5bd657a3817bfe47"
	sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
	plantRecord(ld.ResourceLogs().At(0).Resource().Attributes(), "deployment.")
	lrs := sl.LogRecords()
	for i := 0; i < lrs.Len(); i++ {
		lr := lrs.At(i)
		body := lr.Body().Map()
		content, _ := body.Get("content")
		switch span, name := lr.SpanID().String(), testEventName(lr); {
		case span == first && name == "gen_ai.system.message":
			body.PutStr("content", content.Str()+" Escalations: "+all)
		case span == first && name == "gen_ai.user.message":
			body.PutStr("content", content.Str()+" My details: "+all)
		case span == second && name == "gen_ai.tool.message":
			body.PutStr("content", content.Str()+" "+all)
		case span == second && name == "gen_ai.assistant.message":
			plantRecord(body.PutEmptyMap("x_note"), "")
		}
	}
	// Log records whose bodies are a string, bytes and an array.
	for _, set := range []func(pcommon.Value){
		func(v pcommon.Value) { v.SetStr(all) },
		func(v pcommon.Value) { v.SetEmptyBytes().FromRaw([]byte(all)) },
		func(v pcommon.Value) { v.SetEmptySlice().AppendEmpty().SetStr(all) },
	} {
		lr := lrs.AppendEmpty()
		lrs.At(0).CopyTo(lr)
		lr.Attributes().Clear()
		lr.Attributes().PutStr("event.name", "app.debug")
		set(lr.Body())
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
	td, ld := plantedRun(t)
	// Sanity: the planted bytes are really in the input.
	in, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	inLogs, _ := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	for _, p := range planted {
		input := string(in) + string(inLogs)
		assert.True(t, strings.Contains(input, p.Must()) || strings.Contains(input, jsonEscape(p.Must())), p.Must())
	}

	root := filepath.Join(t.TempDir(), "reprise-data")
	exp, sink, tee := datasetWriter(t, root, "none") // uncompressed, so the bytes on disk can be searched
	run(t, processorConfig(), tee, td, ld)
	// A second run, quarantined (no content recorded), with secrets in its resource and a tool
	// argument: the quarantine dataset and its raw spans are checked too.
	qtd, qld := testfixtures.Traces(t, testfixtures.OTelNoContent), testfixtures.Logs(t, testfixtures.OTelNoContent)
	qtd.ResourceSpans().At(0).Resource().Attributes().PutStr("deployment.owner", "jane.doe@example-corp.com")
	qspans := qtd.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < qspans.Len(); i++ {
		if qspans.At(i).Name() == "execute_tool get_weather" {
			qspans.At(i).Attributes().PutStr("gen_ai.tool.call.arguments", jsonText(map[string]any{"city": "Paris", "token": "npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}))
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

	rows, n := testdataset.DecodedValues(t, root)
	require.GreaterOrEqual(t, n, 3, "a case, its steps and a quarantine row")
	require.Contains(t, string(rows), "<secret:openai_api_key:", "the decoded rows hold the placeholders")
	for _, p := range append(planted, partsPlanted()...) {
		s := p.Must()
		assert.False(t, bytes.Contains(output, []byte(s)) || bytes.Contains(output, []byte(jsonEscape(s))), "%s in the processor output", p.Kind)
		assert.False(t, bytes.Contains(disk, []byte(s)) || bytes.Contains(disk, []byte(jsonEscape(s))), "%s under the dataset root", p.Kind)
		assert.False(t, bytes.Contains(rows, []byte(s)) || bytes.Contains(rows, []byte(jsonEscape(s))), "%s in the decoded rows", p.Kind)
	}

	for _, p := range planted {
		assert.Positive(t, c.Scrub.Counts[p.Kind], "%s is counted", p.Kind)
	}
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

// The fixtures and reference runs are ordinary agent telemetry and the repository's own Go
// code is ordinary text: what the default policy finds there is false positives (or, where
// justified below, real personal data). The rate is logged: go test -v -run FalsePositives.
func TestFalsePositivesOnOrdinaryTelemetryAndCode(t *testing.T) {
	s, err := scrub.New(scrub.Config{Enabled: true, Key: "fp-corpus"})
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
	root := filepath.Clean(filepath.Join(testfixtures.Dir(), "..", ".."))
	refs, err := filepath.Glob(filepath.Join(root, "testdata", "reference", "*.json"))
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
	assert.Equal(t, expectedInReferences, found)

	// Ordinary code: this repository's own Go sources, not the tests (which plant secrets) nor
	// the scrub package (whose patterns describe secrets).
	var files, flagged, findings, size int
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (rel == "scrub" || rel == "test" || strings.HasPrefix(d.Name(), ".") && rel != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var r scrub.Report
		s.Text(string(b), &r)
		files++
		size += len(b)
		if len(r.Counts) > 0 {
			flagged++
			for kind, n := range r.Counts {
				findings += int(n)
				t.Logf("false positive in %s: %s ×%d", rel, kind, n)
			}
		}
		return nil
	}))
	require.Greater(t, files, 50)
	t.Logf("code corpus: %d files, %.1f KiB; %d files with a finding (%.1f%%), %d findings (%.2f per 100 KiB)",
		files, float64(size)/1024, flagged, 100*float64(flagged)/float64(files), findings, 100*1024*float64(findings)/float64(size))
	assert.LessOrEqual(t, float64(flagged)/float64(files), 0.05, "at most 5% of the code files")
}

// expectedInReferences is what the default policy scrubs in the fixtures and reference runs,
// each justified. Nothing in the four OTLP fixture runs; in the reference runs:
var expectedInReferences = map[string]map[string]int64{
	// The Langfuse trace's userId is "user@langfuse.com": a real e-mail address, rightly masked.
	"otel-genai-deprecated-events_pydantic-ai-0.2-events-attribute.langfuse-export.json": {"email": 1},
}

// A recording scrubbed with the policy replays to a live request that carries the real secret,
// with the key generated on the first start and shared through key_file.
func TestScrubbedRecordingReplaysToTheRealSecret(t *testing.T) {
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	key := scrubtest.Planted[0].Text
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
	// No key: the processor generates one in the key file, and the extension, configured with
	// the same key_file, reads the same key.
	pcfg.Scrub.Key, pcfg.Scrub.KeyFile = "", filepath.Join(t.TempDir(), "scrub.key")
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

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
