package replayext

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

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
	u := &upstream{base: base}
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
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			r.set.Logger.Warn("hybrid replay: the upstream call failed", zap.String("upstream", base.Redacted()), zap.Error(err))
			w.Header().Del(headerLive) // the 502 is replay's own answer, in the route's error shape
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

// forward answers a request of a live session from the upstream: the body already read is
// sent again, with the client's own headers (its credentials included, which only hybrid mode
// forwards). The answer is marked live and names the case the session diverged from, so the
// harness that runs the agent can link the new case the live run records to it.
func (r *replay) forward(w http.ResponseWriter, req *http.Request, api string, body []byte, derivedFrom string) {
	up := r.upstreams[api]
	if up == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "hybrid replay needs upstream."+api+".endpoint in the replay extension's config", nil)
		return
	}
	out := req.Clone(req.Context())
	// A copy: the transport may still read the body after the round trip returns, and the
	// request's own buffer is reused once the handler is done.
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(bytes.Clone(body))), int64(len(body))
	w.Header().Set(headerLive, "true")
	if derivedFrom != "" {
		w.Header().Set(headerDerivedFrom, derivedFrom)
	}
	up.proxy.ServeHTTP(w, out)
}
