// Package replaycaseprocessor implements the replay_case processor: it buffers the spans and
// GenAI log events of each trace, builds one replay case per trace with the normalize package,
// judges its evidence, and emits it downstream in the canonical form of the replaycase package.
//
//go:generate mdatagen metadata.yaml
package replaycaseprocessor
