package replaycase

// Metadata keys of a case `reprise mutate` made.
const (
	MetaDerivedFrom = "derived_from" // the case id it was derived from
	MetaMutation    = "mutation"     // the edit, as JSON: {"step", "edit", "value"}
)

// MutationOf is the case a mutated case was made from and its edit, as recorded in its
// metadata (Case.Metadata); ok is false for a recorded run. A mutated case keeps the original's trace, agent,
// status and times, so this is what tells it apart. (derived_from alone does not: a run that
// `reprise ci` recorded has it too, and is a run.)
func MutationOf(metadata map[string]string) (from, edit string, ok bool) {
	edit, ok = metadata[MetaMutation]
	return metadata[MetaDerivedFrom], edit, ok
}
