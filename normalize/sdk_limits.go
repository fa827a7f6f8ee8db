package normalize

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// droppedBySDK reports a step whose span, or a GenAI event of it, arrived with attributes or
// events its SDK dropped at a limit (OTEL_ATTRIBUTE_COUNT_LIMIT, OTEL_SPAN_EVENT_COUNT_LIMIT:
// 128 by default, which a flattened conversation of some sixty messages passes). The SDK says
// only how many it dropped, not which: a message, a tool call or a token count may be missing,
// so the step must not be replayed as what the run did.
func droppedBySDK(in *spanInput, b *stepBuilder) {
	report := func(where, what string, n uint32) {
		if n > 0 {
			b.Findings = append(b.Findings, replaycase.Reason{Code: replaycase.ReasonTruncatedContent, SpanID: b.spanID,
				Detail: fmt.Sprintf("%s: the SDK dropped %d %s at its limit; the step's content may be incomplete", where, n, what)})
		}
	}
	sp := in.Span
	report("span", "attributes", sp.DroppedAttributesCount())
	report("span", "events", sp.DroppedEventsCount())
	for i := range sp.Events().Len() {
		if ev := sp.Events().At(i); strings.HasPrefix(ev.Name(), "gen_ai.") {
			report("span event "+ev.Name(), "attributes", ev.DroppedAttributesCount())
		}
	}
	for _, lr := range in.Events {
		report("log event "+eventName(lr), "attributes", lr.DroppedAttributesCount())
	}
}

// indexedList is indexed, reporting a list that lacks an item before its last one
// ("llm.input_messages.0" and ".2" without ".1"): an attribute limit or a processor that
// deleted keys took it, and the list read without it (a conversation short of a message, say)
// must not pass for the one recorded.
func (b *stepBuilder) indexedList(a pcommon.Map, prefix string) []item {
	list := indexed(a, prefix)
	for i, it := range list {
		if it[0].index != i { // items come sorted by index, one per index
			b.Findings = append(b.Findings, replaycase.Reason{Code: replaycase.ReasonTruncatedContent, SpanID: b.spanID,
				Detail: fmt.Sprintf("%s%d is missing, before %s%d: the list was cut", prefix, i, prefix, list[len(list)-1][0].index)})
			break
		}
	}
	return list
}
