package replayext

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.uber.org/zap"
)

const (
	headerLive        = "X-Replay-Live"
	headerDerivedFrom = "X-Replay-Derived-From"
)

// upstream forwards the model calls of a live session to the real API: a reverse proxy that
// streams JSON and Server-Sent Events through as the API sends them.
type upstream struct {
	base  *url.URL
	proxy *httputil.ReverseProxy
	// timeout is upstream.<api>.timeout: it bounds a forwarded call, its streamed answer
	// included, as it bounds a call of the config's own client (http.Client.Timeout). The
	// proxy takes only the client's transport, which does not apply it.
	timeout time.Duration
}

// API names, as in the routes (/openai/v1/…, /anthropic/v1/…) and the upstream config.
const (
	apiOpenAI    = "openai"
	apiAnthropic = "anthropic"
)

// newUpstreams builds the proxy of each API that has an upstream endpoint.
func (r *replay) newUpstreams(ctx context.Context, host component.Host) (map[string]*upstream, error) {
	out := map[string]*upstream{}
	for api, cfg := range map[string]confighttp.ClientConfig{apiOpenAI: r.cfg.Upstream.OpenAI, apiAnthropic: r.cfg.Upstream.Anthropic} {
		if cfg.Endpoint == "" {
			continue
		}
		u, err := r.newUpstream(ctx, host, api, cfg)
		if err != nil {
			return nil, err
		}
		out[api] = u
	}
	return out, nil
}

// newUpstream builds the proxy of one API from its client config.
func (r *replay) newUpstream(ctx context.Context, host component.Host, api string, cfg confighttp.ClientConfig) (*upstream, error) {
	base, err := url.Parse(strings.TrimSuffix(cfg.Endpoint, "/"))
	if err != nil {
		return nil, err
	}
	client, err := cfg.ToClient(ctx, host.GetExtensions(), r.set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	own := r.credentials()
	if own.any() && len(cfg.Headers) == 0 && !cfg.Auth.HasValue() {
		r.set.Logger.Warn("hybrid replay: with auth configured, the client's credentials are the replay server's and are not forwarded; "+
			"upstream."+api+" sets none (headers or auth), so its live calls carry no credentials", zap.String("upstream", base.Redacted()))
	}
	u := &upstream{base: base, timeout: cfg.Timeout}
	u.proxy = &httputil.ReverseProxy{
		Transport:     client.Transport,
		FlushInterval: -1, // every SSE event reaches the client when the API sends it
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = base.Scheme, base.Host
			pr.Out.URL.Path = base.Path + apiSuffix(pr.In.URL.Path, api)
			pr.Out.URL.RawPath = ""
			pr.Out.Host = base.Host
			for k := range pr.Out.Header {
				if strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Replay-") {
					pr.Out.Header.Del(k) // replay's own headers are not the API's business
				}
			}
			own.strip(pr.Out)
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Del(headerLive) // the error is replay's own answer, in the route's error shape
			if errors.Is(err, context.DeadlineExceeded) {
				r.set.Logger.Warn("hybrid replay: the upstream did not answer in time", zap.String("upstream", base.Redacted()), zap.Duration("timeout", cfg.Timeout))
				writeError(w, http.StatusGatewayTimeout, "server_error", "hybrid replay: the upstream "+base.Redacted()+" did not answer within upstream."+api+".timeout ("+cfg.Timeout.String()+")", nil)
				return
			}
			r.set.Logger.Warn("hybrid replay: the upstream call failed", zap.String("upstream", base.Redacted()), zap.Error(err))
			writeError(w, http.StatusBadGateway, "server_error", "hybrid replay: the upstream "+base.Redacted()+" could not be reached", nil)
		},
	}
	return u, nil
}

// apiSuffix is the part of a replay route after the API's base: /chat/completions of
// /v1/cases/{case_id}/openai/v1/chat/completions, /v1/messages of …/anthropic/v1/messages
// (the Anthropic SDKs' base URL has no /v1).
func apiSuffix(path, api string) string {
	marker := "/openai/v1"
	if api == apiAnthropic {
		marker = "/anthropic"
	}
	if i := strings.Index(path, marker); i >= 0 {
		return path[i+len(marker):]
	}
	return path
}

// upstreamOf is the upstream of api, or answers 400 naming the setting that is missing.
func (r *replay) upstreamOf(w http.ResponseWriter, api string) (*upstream, bool) {
	up := r.upstreams[api]
	if up == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "hybrid replay needs upstream."+api+".endpoint in the replay extension's config", nil)
	}
	return up, up != nil
}

// liveErrorRoom is how long past upstream.<api>.timeout a live answer may still be written:
// room for the 504 that says the upstream did not answer in time.
const liveErrorRoom = 5 * time.Second

// forward answers a request of a live session from the upstream: the body already read is
// sent again, with the client's own headers (its credentials included, which only hybrid mode
// forwards, unless they are the replay server's own: see credentials). The answer is marked
// live and names the case the session diverged from, so the harness that runs the agent can
// link the new case the live run records to it.
func (r *replay) forward(w http.ResponseWriter, req *http.Request, api string, body []byte, derivedFrom string) {
	up, ok := r.upstreamOf(w, api)
	if !ok {
		return
	}
	ctx := req.Context()
	// The server's write_timeout (30 s by default) is meant for replay's own answers; left in
	// place it would cut a live answer (a slow model, a long stream) mid-way, with no error.
	// upstream.<api>.timeout bounds a forwarded call instead, with room to write its 504; none
	// (0) bounds it by nothing, as it would an http.Client of that config.
	var writeDeadline time.Time
	if up.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, up.timeout)
		defer cancel() // after ServeHTTP: the proxy has copied the whole answer by then
		writeDeadline = time.Now().Add(up.timeout + liveErrorRoom)
	}
	_ = http.NewResponseController(w).SetWriteDeadline(writeDeadline) // fails only without a connection deadline to move
	out := req.Clone(ctx)
	// A copy: the transport may still read the body after the round trip returns, and the
	// request's own buffer is reused once the handler is done.
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(bytes.Clone(body))), int64(len(body))
	w.Header().Set(headerLive, "true")
	if derivedFrom != "" {
		w.Header().Set(headerDerivedFrom, derivedFrom)
	}
	up.proxy.ServeHTTP(w, out)
}

// replayCredentials are the parts of a request that carry its credentials for the replay
// server itself. They are not forwarded: the upstream gets its own from upstream.<api>.headers
// or upstream.<api>.auth, which the upstream's client sets on every forwarded call.
type replayCredentials struct {
	headers []string // header names
	params  []string // query parameters, which confighttp also copies into the headers
}

// credentials are what the replay server's authenticator reads when `auth` is configured:
// the headers the OpenAI and Anthropic SDKs send their API key in, Authorization and
// X-Api-Key (a client gives its SDK the replay server's key, and bearertokenauth reads
// Authorization unless its `header` names another), and auth.request_params. Without `auth`,
// the client's key is meant for the upstream and is forwarded.
func (r *replay) credentials() replayCredentials {
	if !r.cfg.Auth.HasValue() {
		return replayCredentials{}
	}
	return replayCredentials{headers: []string{"Authorization", "X-Api-Key"}, params: r.cfg.Auth.Get().RequestParameters}
}

func (c replayCredentials) any() bool { return len(c.headers) > 0 }

// strip removes the credentials from a request about to be forwarded.
func (c replayCredentials) strip(out *http.Request) {
	for _, h := range c.headers {
		out.Header.Del(h)
	}
	if len(c.params) == 0 {
		return
	}
	q := out.URL.Query()
	for _, p := range c.params {
		q.Del(p)
		out.Header.Del(p)
		delete(out.Header, p) // confighttp adds it under the parameter's own spelling
	}
	out.URL.RawQuery = q.Encode()
}
