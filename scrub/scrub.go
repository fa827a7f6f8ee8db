// Package scrub removes secrets and personal data from telemetry before anything is stored,
// structure-aware: it walks attribute values, log bodies and JSON held in strings, so that a
// message list stays a message list. Each finding becomes a deterministic placeholder
// <secret:KIND:HASH> with a keyed hash, so the same secret always scrubs to the same text and
// replay keys (call-site IDs) still match. The processor scrubs recorded telemetry and the
// replay extension scrubs live requests with the same policy.
package scrub

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Actions for a kind.
const (
	ActionMask       = "mask"       // replace with a placeholder (default)
	ActionQuarantine = "quarantine" // replace, and quarantine the case
	ActionOff        = "off"        // do not detect this kind
)

// Config is the scrub policy, shared by the replay_case processor and the replay extension
// (they must be configured alike for replays to match).
type Config struct {
	// Enabled turns scrubbing on. Default true.
	Enabled bool `mapstructure:"enabled"`
	// Key is the HMAC key of the placeholders' hash; take it from the environment
	// (key: ${env:REPRISE_SCRUB_KEY}). Without it a built-in key is used, which keeps
	// placeholders deterministic but lets anyone who knows the key test guesses of
	// low-entropy values (a phone number) against a placeholder.
	Key configopaque.String `mapstructure:"key"`
	// Detectors sets the action of built-in kinds: mask (default), quarantine or off.
	Detectors map[string]string `mapstructure:"detectors"`
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

// DefaultConfig is scrubbing on, every built-in detector masking.
func DefaultConfig() Config { return Config{Enabled: true} }

const defaultKey = "reprise-default-scrub-key"

// Validate checks kinds, actions and patterns.
func (c *Config) Validate() error {
	var errs []error
	known := map[string]bool{}
	for _, k := range Kinds() {
		known[k] = true
	}
	for kind, action := range c.Detectors {
		if !known[kind] {
			errs = append(errs, fmt.Errorf("scrub.detectors: unknown kind %q (known: %s)", kind, strings.Join(Kinds(), ", ")))
		}
		if action != ActionMask && action != ActionQuarantine && action != ActionOff {
			errs = append(errs, fmt.Errorf("scrub.detectors.%s: action must be mask, quarantine or off, got %q", kind, action))
		}
	}
	for i, r := range c.Rules {
		if r.Kind == "" || !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(r.Kind) {
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

// Scrubber applies one policy.
type Scrubber struct {
	key        []byte
	detectors  []detector
	actions    map[string]string // kind → action
	keys       map[string]string // normalized key → kind
	policyHash string
}

// New compiles a policy. A disabled policy gives a nil Scrubber, whose methods do nothing.
func New(cfg Config) (*Scrubber, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled {
		return nil, nil
	}
	s := &Scrubber{key: []byte(cfg.Key), actions: map[string]string{}, keys: map[string]string{}}
	if len(s.key) == 0 {
		s.key = []byte(defaultKey)
	}
	for _, d := range builtins {
		if a := cfg.Detectors[d.kind]; a != ActionOff {
			s.detectors = append(s.detectors, d)
			s.actions[d.kind] = orMask(a)
		}
	}
	if a := cfg.Detectors[KindSecretField]; a != ActionOff {
		s.actions[KindSecretField] = orMask(a)
		for k := range secretKeys {
			s.keys[k] = KindSecretField
		}
	}
	for _, r := range cfg.Rules {
		s.actions[r.Kind] = orMask(r.Action)
		if r.Pattern != "" {
			s.detectors = append(s.detectors, detector{kind: r.Kind, re: regexp.MustCompile(r.Pattern)})
		}
		for _, k := range r.Keys {
			s.keys[normalizeKey(k)] = r.Kind
		}
	}
	// The policy hash names what the policy does, not the key: sorted actions and rules.
	var desc []string
	for kind, a := range s.actions {
		desc = append(desc, kind+"="+a)
	}
	for _, r := range cfg.Rules {
		desc = append(desc, "rule:"+r.Kind+":"+r.Pattern+":"+strings.Join(r.Keys, ","))
	}
	sort.Strings(desc)
	sum := sha256.Sum256([]byte(strings.Join(desc, "\n")))
	s.policyHash = hex.EncodeToString(sum[:8])
	return s, nil
}

func orMask(a string) string {
	if a == "" {
		return ActionMask
	}
	return a
}

// PolicyHash identifies the policy (kinds, actions, rules; not the key).
func (s *Scrubber) PolicyHash() string {
	if s == nil {
		return ""
	}
	return s.policyHash
}

// Report counts what was scrubbed, by kind, and lists the kinds whose action is quarantine.
type Report struct {
	Counts     map[string]int64
	Quarantine []string
}

func (r *Report) found(kind, action string) {
	if r.Counts == nil {
		r.Counts = map[string]int64{}
	}
	r.Counts[kind]++
	if action == ActionQuarantine {
		for _, k := range r.Quarantine {
			if k == kind {
				return
			}
		}
		r.Quarantine = append(r.Quarantine, kind)
	}
}

// placeholder is <secret:KIND:HASH>: the kind and the first 12 hex digits of
// HMAC-SHA256(key, kind NUL value). Placeholders contain no character that needs escaping in
// JSON, so they can replace text inside JSON strings.
func (s *Scrubber) placeholder(kind, value string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(kind + "\x00" + value))
	return "<secret:" + kind + ":" + hex.EncodeToString(m.Sum(nil))[:12] + ">"
}

// Text scrubs one string. When it holds a JSON object or array, the JSON is walked (keys and
// values, including JSON nested in its strings) and written back only if something changed.
func (s *Scrubber) Text(v string, r *Report) string {
	if s == nil || v == "" {
		return v
	}
	if t := strings.TrimSpace(v); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
		var parsed any
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber() // numbers are written back as they were
		if dec.Decode(&parsed) == nil && !dec.More() {
			var sub Report
			out := s.JSON(parsed, &sub)
			if len(sub.Counts) == 0 {
				return v
			}
			merge(r, &sub)
			b, err := marshal(out)
			if err == nil {
				return string(b)
			}
		}
	}
	digits := countDigits(v)
	for i := range s.detectors {
		d := &s.detectors[i]
		if !d.mayMatch(v, digits) {
			continue
		}
		v = d.re.ReplaceAllStringFunc(v, func(match string) string {
			secret := match
			if d.group > 0 {
				sub := d.re.FindStringSubmatch(match)
				if len(sub) <= d.group || sub[d.group] == "" {
					return match
				}
				secret = sub[d.group]
			}
			if strings.HasPrefix(secret, "<secret:") || (d.valid != nil && !d.valid(secret)) {
				return match
			}
			r.found(d.kind, s.actions[d.kind])
			return strings.Replace(match, secret, s.placeholder(d.kind, secret), 1)
		})
	}
	return v
}

func merge(dst, src *Report) {
	for k, n := range src.Counts {
		if dst.Counts == nil {
			dst.Counts = map[string]int64{}
		}
		dst.Counts[k] += n
	}
	for _, k := range src.Quarantine {
		if !slices.Contains(dst.Quarantine, k) {
			dst.Quarantine = append(dst.Quarantine, k)
		}
	}
}

func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// secretValue masks a whole value found under a secret key.
func (s *Scrubber) secretValue(kind, value string, r *Report) string {
	if value == "" || strings.HasPrefix(value, "<secret:") {
		return value
	}
	r.found(kind, s.actions[kind])
	return s.placeholder(kind, value)
}

// JSON scrubs a decoded JSON value (maps, slices, strings, numbers) and returns it.
func (s *Scrubber) JSON(v any, r *Report) any {
	if s == nil {
		return v
	}
	switch t := v.(type) {
	case string:
		return s.Text(t, r)
	case []any:
		for i := range t {
			t[i] = s.JSON(t[i], r)
		}
		return t
	case map[string]any:
		for k, val := range t {
			if kind, ok := s.keys[normalizeKey(k)]; ok {
				if _, nested := val.(map[string]any); !nested {
					t[k] = s.secretValue(kind, fmt.Sprint(val), r)
					continue
				}
			}
			t[k] = s.JSON(val, r)
		}
		return t
	}
	return v
}

// Value scrubs an attribute value in place.
func (s *Scrubber) Value(v pcommon.Value, r *Report) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		if out := s.Text(v.Str(), r); out != v.Str() {
			v.SetStr(out)
		}
	case pcommon.ValueTypeMap:
		s.Map(v.Map(), r)
	case pcommon.ValueTypeSlice:
		for i := 0; i < v.Slice().Len(); i++ {
			s.Value(v.Slice().At(i), r)
		}
	}
}

// Map scrubs attributes in place: values under secret keys entirely, others by detection.
func (s *Scrubber) Map(m pcommon.Map, r *Report) {
	if s == nil {
		return
	}
	for k, v := range m.All() {
		if kind, ok := s.keys[normalizeKey(k)]; ok && v.Type() != pcommon.ValueTypeMap {
			v.SetStr(s.secretValue(kind, v.AsString(), r))
			continue
		}
		s.Value(v, r)
	}
}

// Traces scrubs spans in place: resource, scope and span attributes, span names, status
// messages, events and links.
func (s *Scrubber) Traces(td ptrace.Traces, r *Report) {
	if s == nil {
		return
	}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		s.Map(rs.Resource().Attributes(), r)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			s.Map(ss.Scope().Attributes(), r)
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				s.Map(sp.Attributes(), r)
				sp.SetName(s.Text(sp.Name(), r))
				sp.Status().SetMessage(s.Text(sp.Status().Message(), r))
				for e := 0; e < sp.Events().Len(); e++ {
					ev := sp.Events().At(e)
					ev.SetName(s.Text(ev.Name(), r))
					s.Map(ev.Attributes(), r)
				}
				for l := 0; l < sp.Links().Len(); l++ {
					s.Map(sp.Links().At(l).Attributes(), r)
				}
			}
		}
	}
}

// Logs scrubs log records in place: resource, scope and record attributes and bodies.
func (s *Scrubber) Logs(ld plog.Logs, r *Report) {
	if s == nil {
		return
	}
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		s.Map(rl.Resource().Attributes(), r)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			s.Map(sl.Scope().Attributes(), r)
			for k := 0; k < sl.LogRecords().Len(); k++ {
				lr := sl.LogRecords().At(k)
				s.Map(lr.Attributes(), r)
				s.Value(lr.Body(), r)
			}
		}
	}
}
