package replaycase

// AppendValueJSON exposes appendValueJSON to the external tests, which run it on the canonical
// spans of the fixture cases (normalize imports this package, so only an external test can).
var AppendValueJSON = appendValueJSON
