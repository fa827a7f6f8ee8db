package replaycaseprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/ottlfuncs"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// extractor evaluates named OTTL value expressions over the spans of a trace (metadata and
// assertions). Expressions use span.*, resource.* and scope.* paths and the standard converters.
type extractor struct {
	names []string
	exprs []*ottl.ValueExpression[*ottlspan.TransformContext]
}

func newExtractor(set component.TelemetrySettings, field string, exprs map[string]string) (*extractor, error) {
	e := &extractor{}
	if len(exprs) == 0 {
		return e, nil
	}
	parser, err := newSpanParser(set)
	if err != nil {
		return nil, err
	}
	for name := range exprs {
		e.names = append(e.names, name)
	}
	sort.Strings(e.names)
	for _, name := range e.names {
		ve, err := parser.ParseValueExpression(exprs[name])
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", field, name, err)
		}
		e.exprs = append(e.exprs, ve)
	}
	return e, nil
}

// newSpanParser parses OTTL over spans with explicit context names (span.*, resource.*,
// scope.*), the standard converters and IsRootSpan().
func newSpanParser(set component.TelemetrySettings) (ottl.Parser[*ottlspan.TransformContext], error) {
	funcs := ottlfuncs.StandardConverters[*ottlspan.TransformContext]()
	root := ottlfuncs.NewIsRootSpanFactory()
	funcs[root.Name()] = root
	return ottlspan.NewParser(funcs, set, ottlspan.EnablePathContextNames())
}

// eval returns, for each name, the first non-empty value over the root span and then every
// other span in order. Evaluation errors count as no value.
func (e *extractor) eval(ctx context.Context, td ptrace.Traces, rootSpanID string) map[string]string {
	if len(e.exprs) == 0 {
		return nil
	}
	out := map[string]string{}
	visit := func(wantRoot bool) {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					if (sp.SpanID().String() == rootSpanID) != wantRoot {
						continue
					}
					tctx := ottlspan.NewTransformContext(rs, ss, sp)
					for n, ve := range e.exprs {
						if _, done := out[e.names[n]]; done {
							continue
						}
						if v, err := ve.Eval(ctx, tctx); err == nil {
							if s := valueText(v); s != "" {
								out[e.names[n]] = s
							}
						}
					}
					tctx.Close()
				}
			}
		}
	}
	visit(true)
	if len(out) < len(e.exprs) {
		visit(false)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func valueText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case pcommon.Value:
		return t.AsString()
	case pcommon.Map:
		b, _ := json.Marshal(t.AsRaw())
		return string(b)
	case pcommon.Slice:
		b, _ := json.Marshal(t.AsRaw())
		return string(b)
	}
	return fmt.Sprint(v)
}
