// Package scrub removes secrets and personal data from telemetry before anything is stored,
// structure-aware: it walks attribute keys and values of every type, names, log bodies, and
// JSON held in strings, so that a message list stays a message list. Credentials are found by
// the gitleaks rule set plus a few rules of its own, personal data by checked detectors (Luhn,
// mod-97, libphonenumber). Each finding becomes a deterministic placeholder
// <secret:KIND:HASH> with a keyed hash, so the same secret always scrubs to the same text and
// replay keys (call-site IDs) still match. Config is the one entry point: the processor
// scrubs recorded telemetry and the replay extension scrubs live requests with the same policy.
package scrub

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Scrubber applies one policy. It is safe for concurrent use.
type Scrubber struct {
	key        []byte
	detectors  []detector // own credential rules, personal data, user patterns
	gitleaks   *gitleaksRules
	assignment *assignment // name=value pairs with a secret name, in text
	keys       keyNames
	actions    map[string]string // kind → action, for every kind that is on
	clean      cleanCache        // short strings the whole policy found nothing in
	longClean  longCleanCache    // longer strings Text found nothing in, by hash
	splitClean cleanCache        // short joined sibling pairs the credential rules found nothing in
	kinds      kindCache         // kindOf per key name
	policyHash string
}

// Kinds lists every built-in kind: secret_field, Reprise's own credential and personal-data
// kinds, and the gitleaks rules' kinds.
func Kinds() []string {
	kinds := []string{KindSecretField}
	for _, d := range append(slices.Clone(credentialDetectors), personalDetectors(nil)...) {
		if !slices.Contains(kinds, d.kind) {
			kinds = append(kinds, d.kind)
		}
	}
	for _, k := range gitleaksKinds() {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// New compiles a policy and loads (or creates) its key. A disabled policy gives a nil
// Scrubber, whose methods do nothing.
func New(cfg Config) (*Scrubber, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled {
		return nil, nil
	}
	key, err := loadKey(cfg)
	if err != nil {
		return nil, err
	}
	secretNames := orDefault(cfg.SecretKeyNames, DefaultSecretKeyNames)
	s := &Scrubber{
		key:     key,
		actions: map[string]string{},
		keys:    newKeyNames(secretNames, orDefault(cfg.PublicKeyNames, DefaultPublicKeyNames)),
	}
	on := func(kind string) bool {
		a := cfg.Detectors[kind]
		if a == ActionOff {
			return false
		}
		s.actions[kind] = orMask(a)
		return true
	}
	if on(KindSecretField) {
		s.assignment = newAssignment(secretNames)
	}
	for _, d := range append(slices.Clone(credentialDetectors), personalDetectors(orDefault(cfg.PhoneRegions, DefaultPhoneRegions))...) {
		if on(d.kind) {
			s.detectors = append(s.detectors, d)
		}
	}
	if s.gitleaks, err = sharedGitleaks(func(kind string) bool { return !on(kind) }); err != nil {
		return nil, err
	}
	for _, r := range cfg.Rules {
		s.actions[r.Kind] = orMask(r.Action)
		if r.Pattern != "" {
			s.detectors = append(s.detectors, detector{kind: r.Kind, re: regexp.MustCompile(r.Pattern)})
		}
		for _, k := range r.Keys {
			s.keys.exact[normalizeKeyName(k)] = r.Kind
		}
	}
	s.policyHash = policyHash(cfg, s.actions, secretNames)
	return s, nil
}

// policyHash names what the policy does, not the key: sorted actions, rules and key names.
func policyHash(cfg Config, actions map[string]string, secretNames []string) string {
	var desc []string
	for kind, a := range actions {
		desc = append(desc, kind+"="+a)
	}
	for _, r := range cfg.Rules {
		desc = append(desc, "rule:"+r.Kind+":"+r.Pattern+":"+strings.Join(r.Keys, ","))
	}
	desc = append(desc, "secret_key_names:"+strings.Join(secretNames, ","),
		"public_key_names:"+strings.Join(orDefault(cfg.PublicKeyNames, DefaultPublicKeyNames), ","),
		"phone_regions:"+strings.Join(orDefault(cfg.PhoneRegions, DefaultPhoneRegions), ","))
	sort.Strings(desc)
	sum := sha256.Sum256([]byte(strings.Join(desc, "\n")))
	return hex.EncodeToString(sum[:8])
}

func orDefault(v, def []string) []string {
	if len(v) == 0 {
		return def
	}
	return v
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
	if action == ActionQuarantine && !slices.Contains(r.Quarantine, kind) {
		r.Quarantine = append(r.Quarantine, kind)
	}
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

// placeholder is <secret:KIND:HASH>: the kind and the first 12 hex digits of
// HMAC-SHA256(key, kind NUL value). Placeholders contain no character that needs escaping in
// JSON, so they can replace text inside JSON strings.
func (s *Scrubber) placeholder(kind, value string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(kind + "\x00" + value))
	return "<secret:" + kind + ":" + hex.EncodeToString(m.Sum(nil))[:12] + ">"
}
