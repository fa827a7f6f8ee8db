package scrub

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.opentelemetry.io/collector/config/configopaque"
)

// Actions for a kind.
const (
	ActionMask       = "mask"       // replace with a placeholder (default)
	ActionQuarantine = "quarantine" // replace, and quarantine the case
	ActionOff        = "off"        // do not detect this kind
)

// Config is the scrub policy. It is the single entry point of every component that reads or
// writes content (the replay_case processor, the replay extension, and any later CLI or
// receiver): they all take this block, so one policy applies everywhere, and they must be
// configured alike (same key or key_file) for replays of scrubbed requests to match.
type Config struct {
	// Enabled turns scrubbing on. Default true.
	Enabled bool `mapstructure:"enabled"`
	// Key is the HMAC key of the placeholders' hash; take it from the environment
	// (key: ${env:REPRISE_SCRUB_KEY}). When empty, the key is read from KeyFile. There is no
	// built-in key: a known key would let anyone test guesses of a low-entropy value (a phone
	// number) against a placeholder offline.
	Key configopaque.String `mapstructure:"key"`
	// RequireKey makes an empty Key a configuration error instead of a fallback to KeyFile.
	// A variable set empty (REPRISE_SCRUB_KEY=), a :- default, or an unset
	// ${env:REPRISE_SCRUB_KEY} in a collector built with upstream's env provider (it only warns;
	// the reprise binary's confmap/provider/strictenvprovider refuses it) gives an empty Key, and the fallback
	// then gives each collector of a scaled-out tier a random key of its own: the placeholders of
	// one secret differ between them, and replays scrubbed with another key do not match.
	// Default false, so that a single collector works on a fresh clone.
	RequireKey bool `mapstructure:"require_key"`
	// KeyFile holds the key when Key is empty. If the file does not exist, a random 256-bit key
	// is generated (crypto/rand) and written there with mode 0600 on first start, and reused on
	// later starts; components configured with the same key_file agree. Keep it OUTSIDE the
	// dataset root (never inside what gets shared). Default: scrub.key in the user's
	// configuration directory ($XDG_CONFIG_HOME/reprise/scrub.key, ~/.config/reprise/scrub.key).
	KeyFile string `mapstructure:"key_file"`
	// Detectors sets the action of a built-in kind (see Kinds): mask (default), quarantine or
	// off.
	Detectors map[string]string `mapstructure:"detectors"`
	// SecretKeyNames: an attribute, JSON, query-string or `name=value` key that contains one of
	// these (case-insensitive; `-`, `_`, `.` and spaces ignored) has its whole value masked as
	// secret_field. Default: DefaultSecretKeyNames. Setting it replaces the default list.
	SecretKeyNames []string `mapstructure:"secret_key_names"`
	// PublicKeyNames: keys that contain one of these are not secret even when they contain a
	// secret key name (so `max_tokens` and `gen_ai.usage.input_tokens` stay). Default:
	// DefaultPublicKeyNames. Setting it replaces the default list.
	PublicKeyNames []string `mapstructure:"public_key_names"`
	// PhoneRegions are the ISO 3166 regions whose national formats phone numbers are parsed in
	// (numbers written with a leading + are parsed in any region). Default: US, GB, FR.
	PhoneRegions []string `mapstructure:"phone_regions"`
	// Rules are user rules: a regular expression on values, or attribute/JSON keys whose values
	// are secret, each with its kind name and action.
	Rules []RuleConfig `mapstructure:"rules"`
}

// RuleConfig is one user rule.
type RuleConfig struct {
	// Kind names what the rule finds, in placeholders and counts.
	Kind string `mapstructure:"kind"`
	// Pattern is a regular expression (RE2) matched against string values.
	Pattern string `mapstructure:"pattern"`
	// Keys are attribute or JSON keys whose whole value is secret (case-insensitive).
	Keys []string `mapstructure:"keys"`
	// Action is mask (default) or quarantine.
	Action string `mapstructure:"action"`
}

// DefaultSecretKeyNames are the key-name fragments whose values are secret.
var DefaultSecretKeyNames = []string{
	"password", "passwd", "passphrase", "secret", "token", "api_key", "apikey", "private_key",
	"connection_string", "dsn", "credential", "authorization", "cookie",
}

// DefaultPublicKeyNames are fragments of keys that hold counts and settings, not secrets.
var DefaultPublicKeyNames = []string{
	"tokens", "token_count", "token_type", "tokenizer", "token_limit", "token_usage",
}

// DefaultPhoneRegions are the regions whose national phone formats are recognized.
var DefaultPhoneRegions = []string{"US", "GB", "FR"}

// DefaultConfig is scrubbing on, every built-in detector masking, the key in the default key
// file.
func DefaultConfig() Config { return Config{Enabled: true} }

var kindName = regexp.MustCompile(`^[a-z0-9_]+$`)

// Validate checks kinds, actions, patterns and regions. It does not touch the key file.
func (c *Config) Validate() error {
	var errs []error
	if c.Enabled && c.RequireKey && c.Key == "" {
		errs = append(errs, errors.New("scrub.key is empty and scrub.require_key is true: set the variable the key is read from "+
			"(REPRISE_SCRUB_KEY for key: ${env:REPRISE_SCRUB_KEY}) to the same secret on every collector, e.g. export REPRISE_SCRUB_KEY=$(openssl rand -hex 32)"))
	}
	known := map[string]bool{}
	for _, k := range Kinds() {
		known[k] = true
	}
	for kind, action := range c.Detectors {
		if !known[kind] {
			errs = append(errs, fmt.Errorf("scrub.detectors: unknown kind %q (see docs/scrubbing.md for the list)", kind))
		}
		if action != ActionMask && action != ActionQuarantine && action != ActionOff {
			errs = append(errs, fmt.Errorf("scrub.detectors.%s: action must be mask, quarantine or off, got %q", kind, action))
		}
	}
	// Key names are fragments searched for in every key, separators removed: an empty one is in
	// every key.
	for _, names := range []struct {
		field, effect string
		list          []string
	}{
		{"secret_key_names", "every key would be secret", c.SecretKeyNames},
		{"public_key_names", "no key would be secret", c.PublicKeyNames},
	} {
		for i, n := range names.list {
			if normalizeKeyName(n) == "" {
				errs = append(errs, fmt.Errorf("scrub.%s[%d]: empty name (%q without its separators), which every key contains: %s", names.field, i, n, names.effect))
			}
		}
	}
	for i, r := range c.PhoneRegions {
		if !supportedRegion(r) {
			errs = append(errs, fmt.Errorf("scrub.phone_regions[%d]: unknown region %q (ISO 3166 alpha-2, e.g. US)", i, r))
		}
	}
	for i, r := range c.Rules {
		if r.Kind == "" || !kindName.MatchString(r.Kind) {
			errs = append(errs, fmt.Errorf("scrub.rules[%d]: kind must be lower_snake_case, got %q", i, r.Kind))
		}
		if r.Pattern == "" && len(r.Keys) == 0 {
			errs = append(errs, fmt.Errorf("scrub.rules[%d]: needs a pattern or keys", i))
		}
		if r.Pattern != "" {
			if _, err := regexp.Compile(r.Pattern); err != nil {
				errs = append(errs, fmt.Errorf("scrub.rules[%d].pattern: %w", i, err))
			}
		}
		if r.Action != "" && r.Action != ActionMask && r.Action != ActionQuarantine {
			errs = append(errs, fmt.Errorf("scrub.rules[%d].action must be mask or quarantine, got %q", i, r.Action))
		}
	}
	return errors.Join(errs...)
}

// normalizeKeyName lower-cases a key and drops the separators people vary (db_password,
// DB-PASSWORD, db.password, dbPassword all become dbpassword).
func normalizeKeyName(k string) string {
	return keySeparators.Replace(strings.ToLower(k))
}

var keySeparators = strings.NewReplacer("-", "", "_", "", ".", "", " ", "")
