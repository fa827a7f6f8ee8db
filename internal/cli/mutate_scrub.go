package cli

import (
	"os"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/reprise-dev/reprise/scrub"
)

// scrubKeyVar is the environment variable the local collector's configuration reads its scrub
// key from (config/local.yaml: key: ${env:REPRISE_SCRUB_KEY:-}), and reprise ci's default for
// --scrub-key-env.
const scrubKeyVar = "REPRISE_SCRUB_KEY"

// scrubEdit scrubs the text of an edit before it becomes part of a case. The edit is the
// user's (a tool result or an error copied from production), and the new case is written into
// a dataset whose every column holds only what the collector scrubbed: it is scrubbed as the
// local collector scrubs what it records, with the default policy and the same key
// (REPRISE_SCRUB_KEY, else the default key file), so that a secret in it gets the placeholder
// it has in the recorded steps. JSON stays JSON (scrubbing writes a string back as JSON).
func scrubEdit(m *mutation) error {
	cfg := scrub.DefaultConfig()
	cfg.Key = configopaque.String(os.Getenv(scrubKeyVar))
	s, err := scrub.New(cfg)
	if err != nil {
		return err
	}
	m.Value = s.Text(m.Value, &scrub.Report{})
	return nil
}
