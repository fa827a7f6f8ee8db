package replaycase

import "go.opentelemetry.io/collector/pdata/pcommon"

// AppendValueJSON exposes appendValueJSON to the external tests, which run it on the canonical
// spans of the fixture cases (normalize imports this package, so only an external test can).
var AppendValueJSON = appendValueJSON

// DecodeBothWays decodes the attribute key of a into direct (getJSON, straight from pdata when it
// can) and viaJSON (always through the JSON text), for the tests that compare the two.
func DecodeBothWays(a pcommon.Map, key string, direct, viaJSON any) (directErr, jsonErr error) {
	v, _ := a.Get(key)
	return getJSON(a, key, direct), getJSONText(v, key, viaJSON)
}
