package replayext

import "fmt"

// Mode says what replay answers when no recording matches a request exactly.
type Mode int

const (
	// ModeStrict serves exact matches only; any other request gets a 404 that names the fields
	// where it differs from the next recorded call.
	ModeStrict Mode = iota
	// ModeLenient serves the next recorded call of the case instead, and logs a divergence.
	ModeLenient
	// ModeHybrid serves recorded calls until the first miss of a session, then forwards that
	// model call and every later one of the session to the configured upstream, and logs the
	// divergence.
	ModeHybrid
)

var modeNames = [...]string{ModeStrict: "strict", ModeLenient: "lenient", ModeHybrid: "hybrid"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// MarshalText writes the mode's name, as configured.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads "strict", "lenient" or "hybrid".
func (m *Mode) UnmarshalText(b []byte) error {
	for i, name := range modeNames {
		if string(b) == name {
			*m = Mode(i)
			return nil
		}
	}
	return fmt.Errorf("mode must be %q, %q or %q, got %q", ModeStrict, ModeLenient, ModeHybrid, string(b))
}
