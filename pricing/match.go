package pricing

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dlclark/regexp2"
)

// clause is genai-prices' match logic: exactly one of the tests, or an and/or of clauses.
// Text tests ignore case; a regex is applied as written, anywhere in the text (Python's
// re.search). The data's regexes use lookahead, which Go's regexp lacks, hence regexp2. Its
// match timeout is not used (it runs a clock goroutine for the life of the process); the
// price file is operator configuration, and Lookup bounds the text a pattern sees instead.
type clause struct {
	StartsWith *string   `json:"starts_with"`
	EndsWith   *string   `json:"ends_with"`
	Contains   *string   `json:"contains"`
	Equals     *string   `json:"equals"`
	Regex      *string   `json:"regex"`
	Or         []*clause `json:"or"`
	And        []*clause `json:"and"`

	re *regexp2.Regexp
}

func (c *clause) compile() error {
	set := 0
	for _, s := range []*string{c.StartsWith, c.EndsWith, c.Contains, c.Equals, c.Regex} {
		if s != nil {
			set++
		}
	}
	if c.Or != nil {
		set++
	}
	if c.And != nil {
		set++
	}
	if set != 1 {
		return fmt.Errorf("match clause must have exactly one of starts_with, ends_with, contains, equals, regex, or, and (has %d)", set)
	}
	if c.Regex != nil {
		re, err := regexp2.Compile(*c.Regex, regexp2.None)
		if err != nil {
			return fmt.Errorf("match regex %q: %w", *c.Regex, err)
		}
		c.re = re
	}
	var errs []error
	for _, sub := range append(append([]*clause{}, c.Or...), c.And...) {
		if sub == nil {
			errs = append(errs, errors.New("match clause is null"))
			continue
		}
		errs = append(errs, sub.compile())
	}
	return errors.Join(errs...)
}

func (c *clause) match(text string) bool {
	lower := strings.ToLower(text)
	switch {
	case c.StartsWith != nil:
		return strings.HasPrefix(lower, strings.ToLower(*c.StartsWith))
	case c.EndsWith != nil:
		return strings.HasSuffix(lower, strings.ToLower(*c.EndsWith))
	case c.Contains != nil:
		return strings.Contains(lower, strings.ToLower(*c.Contains))
	case c.Equals != nil:
		return lower == strings.ToLower(*c.Equals)
	case c.Regex != nil:
		ok, err := c.re.MatchString(text)
		return ok && err == nil
	case c.Or != nil:
		for _, sub := range c.Or {
			if sub.match(text) {
				return true
			}
		}
		return false
	default:
		for _, sub := range c.And {
			if !sub.match(text) {
				return false
			}
		}
		return true
	}
}

// providerAliases maps the semantic conventions' gen_ai.provider.name values that no
// genai-prices provider id or provider_match recognises to the provider that prices them.
var providerAliases = map[string]string{
	"x_ai":               "x-ai",
	"azure.ai.openai":    "azure",
	"azure.ai.inference": "azure",
	"gcp.gen_ai":         "google",
	"mistral_ai":         "mistral",
}

// matched is the outcome of matching a provider name and a model reference; nil fields mean
// not found. pricedAs is the name the model was found under when it is not the reference as
// recorded (a provider prefix stripped), else empty.
type matched struct {
	provider *provider
	model    *model
	pricedAs string
}

// maxCachedMatches bounds the match cache: a run of ever new model names (a bug upstream, or
// hostile input) must not grow memory; past the bound, lookups are simply not cached.
const maxCachedMatches = 4096

// match finds the provider and the model, from the cache when the pair was seen before (a
// collector sees the same few models over and over; matching runs through every clause of a
// provider's models).
func (t *Table) match(providerName, ref string) matched {
	key := providerName + "\x00" + ref
	if v, ok := t.cache.Load(key); ok {
		return v.(matched)
	}
	var m matched
	// Model names are matched in lower case: the data's clauses are written so, and a regex
	// (openai's model_match ^o[134]) would otherwise miss "O3-mini".
	lower := strings.ToLower(ref)
	if m.provider = t.findProvider(providerName, lower); m.provider != nil {
		m.model = t.findModel(m.provider, lower)
		// Only a recorded provider tells which prefix is its own.
		if m.model == nil && providerName != "" {
			if rest := t.unprefixed(m.provider, ref); rest != "" {
				if m.model = t.findModel(m.provider, strings.ToLower(rest)); m.model != nil {
					m.pricedAs = rest
				}
			}
		}
	}
	if t.cached.Add(1) <= maxCachedMatches {
		t.cache.Store(key, m)
	}
	return m
}

// findProvider picks the provider by the recorded provider name, as genai-prices does: an
// exact id first, then the providers' provider_match clauses in order. With no provider
// recorded, the first provider whose model_match accepts the model is taken.
func (t *Table) findProvider(name, modelRef string) *provider {
	name = strings.ToLower(strings.TrimSpace(name))
	if alias, ok := providerAliases[name]; ok {
		name = alias
	}
	if name != "" {
		for _, p := range t.providers {
			if p.ID == name {
				return p
			}
		}
		for _, p := range t.providers {
			if p.ProviderMatch != nil && p.ProviderMatch.match(name) {
				return p
			}
		}
		return nil
	}
	for _, p := range t.providers {
		if p.ModelMatch != nil && p.ModelMatch.match(modelRef) {
			return p
		}
	}
	return nil
}

// compactDate is a model reference with a compact date suffix (gpt-5.2-20251211), which
// LiteLLM and OpenRouter emit; genai-prices retries such a reference in the dashed form.
var compactDate = regexp.MustCompile(`(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(-|:|$)`)

// findModel finds the model in the provider, then in its fallback providers (one step, as
// genai-prices does). ref is in lower case.
func (t *Table) findModel(p *provider, ref string) *model {
	if m := t.matchModel(p, ref, true); m != nil {
		return m
	}
	if dashed := compactDate.ReplaceAllString(ref, "$1$2-$3-$4$5"); dashed != ref {
		return t.matchModel(p, dashed, true)
	}
	return nil
}

func (t *Table) matchModel(p *provider, ref string, fallback bool) *model {
	for _, m := range p.Models {
		if m.Match.match(ref) {
			return m
		}
	}
	if !fallback {
		return nil
	}
	for _, id := range p.Fallback {
		for _, fp := range t.providers {
			if fp.ID == id {
				if m := t.matchModel(fp, ref, false); m != nil {
					return m
				}
			}
		}
	}
	return nil
}
