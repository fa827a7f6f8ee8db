package pricing

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// keyCacheWrite1h is the price of a one-hour cache write (Anthropic), USD per million tokens;
// cache_write_mtok is the five-minute one.
const keyCacheWrite1h = "cache_write_1h_mtok"

// CacheWrites is how a call's cache writes split by how long the cache lives, as Anthropic's
// usage records it (cache_creation.ephemeral_5m_input_tokens and ephemeral_1h_input_tokens):
// a one-hour write costs more than a five-minute one. No convention's attributes carry the
// split (gen_ai.usage.cache_creation.input_tokens, llm.token_count.prompt_details.cache_write
// and ai.usage.inputTokenDetails.cacheWriteTokens count both together); only the response's
// own usage object does, where an instrumentation records it.
type CacheWrites struct{ FiveMinute, OneHour int64 }

// cacheWriteAttrs are the span attributes that hold Anthropic's usage object: the Messages
// response body OpenInference records, and the Vercel AI SDK's provider metadata
// ({"anthropic": {"usage": …}}).
var cacheWriteAttrs = []string{"output.value", "ai.response.providerMetadata"}

// cacheWrites is the split a span's recorded usage gives, if one does.
func cacheWrites(a pcommon.Map) (CacheWrites, bool) {
	for _, key := range cacheWriteAttrs {
		v, found := a.Get(key)
		// Most bodies hold no split: look before parsing the whole body.
		if !found || v.Type() != pcommon.ValueTypeStr || !strings.Contains(v.Str(), `"ephemeral_1h_input_tokens"`) {
			continue
		}
		var body struct {
			Usage     *anthropicUsage `json:"usage"`
			Anthropic struct {
				Usage *anthropicUsage `json:"usage"`
			} `json:"anthropic"`
		}
		if json.Unmarshal([]byte(v.Str()), &body) != nil {
			continue
		}
		for _, u := range []*anthropicUsage{body.Usage, body.Anthropic.Usage} {
			if u != nil && u.CacheCreation != nil && u.CacheCreation.FiveMinute >= 0 && u.CacheCreation.OneHour >= 0 {
				return CacheWrites{FiveMinute: u.CacheCreation.FiveMinute, OneHour: u.CacheCreation.OneHour}, true
			}
		}
	}
	return CacheWrites{}, false
}

type anthropicUsage struct {
	CacheCreation *struct {
		FiveMinute int64 `json:"ephemeral_5m_input_tokens"`
		OneHour    int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// oneHourWrites is how many of a call's cache writes are priced at the one-hour price, and a
// note for its cost's detail: how many were, or that the five-minute price was assumed. w is
// the recorded split, if recorded. A split is used only when it is of the cache write tokens
// the step counts, so that no token is priced twice or left out.
func oneHourWrites(q *Quote, u replaycase.Usage, w CacheWrites, recorded bool) (int64, string) {
	oneHour := q.price([]string{keyCacheWrite1h})
	if u.CacheWriteInputTokens <= 0 || oneHour == nil {
		return 0, "" // no cache writes, or a model whose cache writes have one price
	}
	const assumed = "cache writes priced at the five-minute price (cache_write_mtok): "
	switch {
	case !recorded:
		return 0, assumed + "the recorded usage does not say how many were one-hour writes, which cost more (cache_write_1h_mtok)"
	case w.FiveMinute+w.OneHour != u.CacheWriteInputTokens:
		return 0, fmt.Sprintf(assumed+"the recorded split (%d five-minute + %d one-hour) is not of the %d cache write tokens recorded",
			w.FiveMinute, w.OneHour, u.CacheWriteInputTokens)
	case w.OneHour == 0:
		return 0, ""
	}
	unit, _ := oneHour.at(u.InputTokens)
	return w.OneHour, fmt.Sprintf("%d of the %d cache write tokens were one-hour writes, priced at cache_write_1h_mtok (%v USD per million)",
		w.OneHour, u.CacheWriteInputTokens, unit)
}
