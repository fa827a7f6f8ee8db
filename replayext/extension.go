package replayext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/replayext/internal/metadata"
	"github.com/reprise-dev/reprise/scrub"
	"github.com/reprise-dev/reprise/wireapi"
)

// replay is the extension: an HTTP server over a store of recorded cases.
type replay struct {
	cfg       *Config
	set       extension.Settings
	telemetry *metadata.TelemetryBuilder
	store     *store
	sessions  *sessions
	refusals  refusals // every refused request, for `reprise ci` (refusals.go)
	scrubber  *scrub.Scrubber
	upstreams map[string]*upstream // by API, for those with an upstream endpoint
	// The memos of repeated work (memo.go): decoded, scrubbed request bodies per API, and the
	// JSON answers rendered from recorded steps.
	chatRequests      bodyMemo[modelInput[*wireapi.ChatRequest]]
	responsesRequests bodyMemo[modelInput[*wireapi.ResponsesRequest]]
	messagesRequests  bodyMemo[modelInput[*wireapi.MessagesRequest]]
	answers           *memo[answerKey, []byte]
	// slots holds one token per request being answered (busy.go); busyWait is how long a
	// request waits for one (a test shortens it).
	slots    chan struct{}
	busyWait time.Duration

	server *http.Server
	addr   net.Addr
	// stopping ends when Shutdown begins: the refresh loop ends, and so does a refresh under
	// way, which may be waiting on the object store.
	stopping context.Context
	stop     context.CancelFunc
	// refreshTimeout bounds one refresh (refreshDeadline; a test shortens it).
	refreshTimeout time.Duration
	wg             sync.WaitGroup
}

// refreshDeadline bounds a refresh: an object store that stops answering part way through a
// listing or an index scan would otherwise hold it, and Start with it, for ever. A refresh cut
// short keeps what it indexed, and the next one reads the files it did not: a bucket too large
// to index at once is indexed over a few refreshes.
const refreshDeadline = 2 * time.Minute

func newReplay(set extension.Settings, cfg *Config) (*replay, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	scrubber, err := scrub.New(cfg.Scrub)
	if err != nil {
		return nil, err
	}
	src, err := newSource(cfg)
	if err != nil {
		return nil, err
	}
	r := &replay{cfg: cfg, set: set, telemetry: tb, store: newStoreOf(src, cfg.CaseCacheSize), sessions: newSessions(cfg.Sessions.MaxSessions, cfg.Sessions.IdleTimeout, time.Now), scrubber: scrubber, refreshTimeout: refreshDeadline,
		chatRequests: newBodyMemo[modelInput[*wireapi.ChatRequest]](), responsesRequests: newBodyMemo[modelInput[*wireapi.ResponsesRequest]](),
		messagesRequests: newBodyMemo[modelInput[*wireapi.MessagesRequest]](), answers: newMemo[answerKey, []byte](),
		slots: make(chan struct{}, cfg.MaxConcurrentRequests), busyWait: defaultBusyWait}
	r.stopping, r.stop = context.WithCancel(context.Background())
	ctx := context.Background()
	r.sessions.created = func() { tb.ExtensionReplaySessions.Add(ctx, 1) }
	// The attribute sets are built once: a request without a session creates one, and may
	// evict another.
	byReason := map[string]metric.AddOption{}
	for _, reason := range []string{evictedCapacity, evictedIdle} {
		byReason[reason] = metric.WithAttributes(attribute.String("reason", reason))
	}
	r.sessions.evicted = func(reason string) {
		tb.ExtensionReplaySessions.Add(ctx, -1)
		opt, ok := byReason[reason]
		if !ok {
			opt = metric.WithAttributes(attribute.String("reason", reason))
		}
		tb.ExtensionReplaySessionsEvicted.Add(ctx, 1, opt)
	}
	return r, nil
}

// Start loads the datasets, starts watching them for new files and starts serving. It fails
// when the system refuses memory for the index: serving part of the dataset would answer
// some recorded requests with misses. An object store that does not answer within the
// refresh's deadline is not such a failure: as when it refuses a listing, the extension
// serves what it indexed and the next refreshes read the rest.
func (r *replay) Start(ctx context.Context, host component.Host) error {
	if err := r.refresh(ctx); err != nil {
		return fmt.Errorf("indexing %s: %w", r.cfg.location(), err)
	}
	ln, err := r.cfg.ServerConfig.ToListener(ctx)
	if err != nil {
		return err
	}
	r.addr = ln.Addr()
	if r.upstreams, err = r.newUpstreams(ctx, host); err != nil {
		_ = ln.Close()
		return err
	}
	r.server, err = r.cfg.ServerConfig.ToServer(ctx, host.GetExtensions(), r.set.TelemetrySettings, r.routes(), confighttp.WithErrorHandler(r.serverError))
	if err != nil {
		_ = ln.Close()
		return err
	}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		if err := r.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	}()
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(r.cfg.RefreshInterval)
		defer t.Stop()
		for {
			select {
			case <-r.stopping.Done():
				return
			case <-t.C:
				if err := r.refresh(r.stopping); err != nil {
					r.set.Logger.Error("replay index not refreshed: new files are indexed once memory is available", zap.Error(err))
				}
			}
		}
	}()
	r.set.Logger.Info("replay extension serving", zap.String("endpoint", r.addr.String()), zap.String("dataset", r.cfg.location()))
	return nil
}

// newSource is the dataset cfg names: the bucket when object_store is set, else the directory.
func newSource(cfg *Config) (source, error) {
	if cfg.ObjectStore.HasValue() {
		src, err := newObjectSource(context.Background(), *cfg.ObjectStore.Get())
		if err != nil {
			return nil, fmt.Errorf("object_store: %w", err)
		}
		return src, nil
	}
	return newLocalSource(cfg.Directory), nil
}

// location names the dataset read, for logs.
func (c *Config) location() string {
	if c.ObjectStore.HasValue() {
		return c.ObjectStore.Get().URL
	}
	return c.Directory
}

// refresh indexes the files published since the last refresh, within the refresh's deadline
// and until Shutdown. Its error is the system refusing memory for the index; a refresh after
// start-up logs it and leaves the index as it was, and the files are read again on the next
// one.
func (r *replay) refresh(parent context.Context) error {
	ctx, cancel := context.WithTimeout(parent, r.refreshTimeout)
	defer cancel()
	defer context.AfterFunc(r.stopping, cancel)()
	res := r.store.refresh(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.set.Logger.Warn("replay index refresh cut short: the dataset did not answer in time; the files not read are read at the next refresh",
			zap.String("dataset", r.cfg.location()), zap.Duration("deadline", r.refreshTimeout))
	}
	if res.superseded > 0 { // answers rendered from the rows a re-drive replaced
		r.answers.forget()
	}
	mctx := context.Background() // the metrics are recorded whatever ended the refresh
	if res.added != res.dropped {
		r.telemetry.ExtensionReplayCasesLoaded.Add(mctx, int64(res.added-res.dropped))
	}
	r.logFileReads(res)
	for _, sk := range res.skipped { // once per file and reason: a file is indexed once
		r.telemetry.ExtensionReplayIndexRowsSkipped.Add(mctx, int64(sk.count), metric.WithAttributes(attribute.String("reason", sk.reason)))
		r.set.Logger.Warn("rows left out of the replay index: no request can name their case", zap.String("file", sk.file),
			zap.String("reason", sk.reason), zap.Int64("first_row", sk.firstRow), zap.Int("rows", sk.count))
	}
	return res.err
}

// Shutdown stops serving and watching. A refresh under way is cut short at once; requests
// under way are waited for until ctx ends, and then their connections are closed and their
// reads of the dataset ended, so that a stalled object store cannot hold the collector's
// shutdown.
func (r *replay) Shutdown(ctx context.Context) error {
	r.stop()
	var err error
	if r.server != nil {
		if err = r.server.Shutdown(ctx); err != nil {
			_ = r.server.Close()
		}
	}
	if r.store != nil {
		r.store.src.close()
	}
	if r.server != nil {
		stopped := make(chan struct{})
		go func() {
			r.wg.Wait()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
		}
	}
	r.telemetry.Shutdown()
	return err
}

func (r *replay) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/cases", r.listCases)
	mux.HandleFunc("GET /v1/cases/{case_id}", r.getCase)
	mux.HandleFunc("GET /v1/calls/{call_site_id}", r.getCall)
	mux.HandleFunc("GET /v1/divergences", r.listDivergences)
	mux.HandleFunc("POST /v1/cases/{case_id}/openai/v1/chat/completions", r.chatCompletions)
	mux.HandleFunc("POST /openai/v1/chat/completions", r.chatCompletions)
	mux.HandleFunc("POST /v1/cases/{case_id}/openai/v1/responses", r.responses)
	mux.HandleFunc("POST /openai/v1/responses", r.responses)
	mux.HandleFunc("GET /v1/cases/{case_id}/openai/v1/responses/{response_id}", r.getResponse)
	mux.HandleFunc("GET /openai/v1/responses/{response_id}", r.getResponse)
	mux.HandleFunc("POST /v1/cases/{case_id}/anthropic/v1/messages", r.anthropicMessages)
	mux.HandleFunc("POST /anthropic/v1/messages", r.anthropicMessages)
	// ANTHROPIC_BASE_URL is …/anthropic to the Anthropic SDKs, which append /v1/messages, and
	// …/anthropic/v1 to the Vercel AI SDK's @ai-sdk/anthropic, which appends /messages: `reprise
	// ci` sets one value for both, so the route takes both (anthropic_base_url.go).
	mux.HandleFunc("POST /v1/cases/{case_id}/anthropic/messages", withAnthropicV1(r.anthropicMessages))
	mux.HandleFunc("POST /anthropic/messages", withAnthropicV1(r.anthropicMessages))
	mux.HandleFunc("POST /v1/cases/{case_id}/openai/v1/embeddings", r.embeddings)
	mux.HandleFunc("POST /openai/v1/embeddings", r.embeddings)
	mux.HandleFunc("POST /v1/cases/{case_id}/tools/{tool_name}", r.toolResult)
	mux.HandleFunc("POST /v1/cases/{case_id}/retrieval", r.retrieval)
	mux.HandleFunc("/", noRoute(mux))
	return r.limitRequests(refuseEmptySegments(mux))
}

// record counts one lookup and its latency.
func (r *replay) record(ctx context.Context, endpoint, outcome string, start time.Time) {
	r.telemetry.ExtensionReplayLookups.Add(ctx, 1, lookupAttributes(endpoint, outcome).add...)
	r.telemetry.ExtensionReplayLookupDuration.Record(ctx, float64(time.Since(start).Microseconds())/1000, lookupAttributes(endpoint, "").record...)
}

// lookupOption is one attribute set as the option lists of a counter and of a histogram:
// passed on with `...`, a list already built is not copied, where a single option is put in
// a new list on each call.
type lookupOption struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

func newLookupOption(attrs ...attribute.KeyValue) lookupOption {
	o := metric.WithAttributes(attrs...)
	return lookupOption{[]metric.AddOption{o}, []metric.RecordOption{o}}
}

// lookupOptions are the metric attributes of every endpoint and outcome (outcome "" for the
// duration, which has none), built once: building them per request was a measurable share of
// a replayed call.
var lookupOptions = func() map[[2]string]lookupOption {
	m := map[[2]string]lookupOption{}
	for _, e := range []string{endpointChat, endpointTool, endpointRetrieval} {
		m[[2]string{e, ""}] = newLookupOption(attribute.String("endpoint", e))
		for _, o := range []string{outcomeExact, outcomeDivergent, outcomeMiss, outcomeLive} {
			m[[2]string{e, o}] = newLookupOption(attribute.String("endpoint", e), attribute.String("outcome", o))
		}
	}
	return m
}()

func lookupAttributes(endpoint, outcome string) lookupOption {
	if o, ok := lookupOptions[[2]string{endpoint, outcome}]; ok {
		return o
	}
	if outcome == "" {
		return newLookupOption(attribute.String("endpoint", endpoint))
	}
	return newLookupOption(attribute.String("endpoint", endpoint), attribute.String("outcome", outcome))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeError answers in the OpenAI error shape, which the OpenAI SDKs surface as-is.
func writeError(w http.ResponseWriter, status int, typ, message string, extra map[string]any) {
	body := map[string]any{"message": message, "type": typ, "param": nil, "code": strings.TrimSuffix(typ, "_error")}
	for k, v := range extra {
		body[k] = v
	}
	writeJSON(w, status, map[string]any{"error": body})
}

// writeRequestError answers 400 for a body the API would refuse, naming the field.
func writeRequestError(w http.ResponseWriter, err error) {
	var re *wireapi.RequestError
	if !errors.As(err, &re) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid request body", nil)
		return
	}
	var param any
	if re.Param != "" {
		param = re.Param
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": re.Message, "type": "invalid_request_error", "param": param, "code": re.Code}})
}
