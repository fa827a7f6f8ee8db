package scrub

import (
	"encoding/binary"
	"maps"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"weak"

	"github.com/spf13/viper"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	gitleaksre "github.com/zricethezav/gitleaks/v8/regexp"
	"github.com/zricethezav/gitleaks/v8/report"
)

// The credential rule set is gitleaks' default configuration (about 220 maintained rules,
// each a regular expression with keywords, an entropy threshold and allow-lists), used as a
// library. Its rule ids become kinds in snake_case: aws-access-token → aws_access_token.

// gitleaksConfig is the default configuration with the stop words taken out (stopwords.go)
// and each rule's regular expression kept as its text (regexes), compiled when a text first
// needs the rule (gitleaksRules.detector). Compiled, the ~220 expressions held 2.6 MB of heap
// for the life of the process (`go test -count 1 -run TestScrubberHeap -v ./scrub/`: the
// configuration kept 3.7 MB, now 1.1 MB), while a collector's texts need few of the rules (a
// rule runs only on texts holding one of its keywords). Each live byte costs about two at the
// heap's peak (GOGC=100): docs/benchmarks.md, issue 16 part 14.
type gitleaksConfig struct {
	config.Config                   // its rules' Regex is nil
	regexes       map[string]string // rule id → its regular expression, for rules that have one
	widened       map[string]string // rule id → its widened form, for token rules (boundaries.go)
	stopWords     stopWords
}

var gitleaksDefault = sync.OnceValues(func() (gitleaksConfig, error) {
	// gitleaks logs through a global zerolog logger to stderr; its messages can quote what
	// it looked at, and nothing it says belongs in the collector's log.
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	// What detect.NewDetectorDefaultConfig does, without the detector: its keyword trie would
	// take 2.6 MB to be thrown away.
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return gitleaksConfig{}, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return gitleaksConfig{}, err
	}
	def, err := vc.Translate()
	if err != nil {
		return gitleaksConfig{}, err
	}
	cfg, stop, err := withoutStopWords(def)
	if err != nil {
		return gitleaksConfig{}, err
	}
	regexes, widened := map[string]string{}, map[string]string{}
	for id, rule := range cfg.Rules { // withoutStopWords' copy of the rules: ours to change
		if rule.Regex != nil {
			regexes[id] = rule.Regex.String() // the text it was compiled from
			if w, ok := widenedRule(id, regexes[id]); ok {
				widened[id] = w
			}
			rule.Regex = nil
			cfg.Rules[id] = rule
		}
	}
	return gitleaksConfig{Config: cfg, regexes: regexes, widened: widened, stopWords: stop}, nil
})

// gitleaksKind is the kind of a gitleaks rule.
func gitleaksKind(ruleID string) string {
	return strings.ReplaceAll(ruleID, "-", "_")
}

// gitleaksKinds lists the kinds of the default rule set, sorted.
func gitleaksKinds() []string {
	cfg, err := gitleaksDefault()
	if err != nil {
		return nil
	}
	var kinds []string
	for id := range cfg.Rules {
		kinds = append(kinds, gitleaksKind(id))
	}
	sort.Strings(kinds)
	return kinds
}

// gitleaksRules runs gitleaks' rules on a text the way its detector does, with a smaller
// keyword index. gitleaks runs a rule that has keywords (every default rule has) only on text
// that contains one of them (lower-cased): its detector finds them with an Aho-Corasick trie of 256 int64 per
// state, 2.6 MB for the default rules, held for the life of the process. keywordIndex finds the
// same keywords in 0.1 MB, so the rules a text needs are known here: they run through a
// detector made of just those rules, without their keywords (the detector then runs them all,
// and its trie is empty). One detector for all the rules a text needs, not one per rule,
// because gitleaks drops a generic finding that another of the rules also found in the same
// text; most texts need none.
//
// It is safe for concurrent use: DetectString only reads the detector's rules and keeps each
// scan's state in locals (its one shared counter, TotalBytes, is atomic).
type gitleaksRules struct {
	config    config.Config     // the global allow-lists, for every detector
	ids       []string          // rule ids, sorted: a rule's number is its index
	rules     []config.Rule     // by number, without keywords or Regex
	regexes   map[string]string // rule id → its regular expression: gitleaksConfig's, read only
	widened   map[string]string // rule id → its widened form: gitleaksConfig's, read only
	widenable ruleSet           // the rules that have a widened form
	byKeyword [][]int           // keyword number (keywords' order) → the rules that have it
	always    []int             // rules without keywords, which gitleaks runs on every text (none by default)
	keywords  *keywordIndex
	stopWords stopWords // shared by every rule set, read only

	mu        sync.Mutex
	detectors map[string]*detect.Detector // by the set of rules (ruleSet.appendKey)
	compiled  []*gitleaksre.Regexp        // by number: the rule's Regex once a text has needed it, else nil
	compiledW []*gitleaksre.Regexp        // the same for the widened forms
}

// maxDetectors bounds the detectors kept, one per set of rules that texts have needed (a few
// KiB each). Past it, a set's detector is made for the one text.
const maxDetectors = 64

// gitleaksRuleSets holds the rule set built for each set of rules turned off. The processor
// and the replay extension scrub with the same policy, and a built rule set holds ~0.3 MB
// (`go test -count 1 -run TestScrubberHeap -v ./scrub/` logs what a Scrubber keeps), so each
// process builds one per distinct set. The map holds its values weakly:
// a rule set no Scrubber uses any more (after a configuration reload) is collected, and built
// again if a policy asks for it.
var gitleaksRuleSets = struct {
	sync.Mutex
	byOff map[string]weak.Pointer[gitleaksRules]
}{byOff: map[string]weak.Pointer[gitleaksRules]{}}

// sharedGitleaks returns the rule set without the rules whose kind is off, built once. It
// asks off about every rule's kind exactly once (New records the action of each kind that is on
// as it answers).
func sharedGitleaks(off func(kind string) bool) (*gitleaksRules, error) {
	cfg, err := gitleaksDefault()
	if err != nil {
		return nil, err
	}
	offIDs := map[string]bool{}
	for id := range cfg.Rules {
		if off(gitleaksKind(id)) {
			offIDs[id] = true
		}
	}
	key := strings.Join(slices.Sorted(maps.Keys(offIDs)), ",")

	gitleaksRuleSets.Lock()
	defer gitleaksRuleSets.Unlock()
	if g := gitleaksRuleSets.byOff[key].Value(); g != nil {
		return g, nil
	}
	g, err := newGitleaks(cfg, offIDs)
	if err != nil {
		return nil, err
	}
	gitleaksRuleSets.byOff[key] = weak.Make(g)
	return g, nil
}

// newGitleaks builds the rule set without the rules whose id is in off. Decoding is left to the
// walker (which decodes base64 itself and masks the encoded text), so gitleaks scans text as
// given.
func newGitleaks(def gitleaksConfig, off map[string]bool) (*gitleaksRules, error) {
	g := &gitleaksRules{config: def.Config, regexes: def.regexes, widened: def.widened, stopWords: def.stopWords, detectors: map[string]*detect.Detector{}}
	g.config.Rules, g.config.Keywords = nil, nil
	for id := range def.Rules {
		if _, ok := def.regexes[id]; ok && !off[id] { // a rule without Regex is on file paths only
			g.ids = append(g.ids, id)
		}
	}
	sort.Strings(g.ids)
	number := map[string]int{} // keyword → its number
	var keywords []string
	for n, id := range g.ids {
		rule := def.Rules[id]
		if len(rule.Keywords) == 0 {
			g.always = append(g.always, n)
		}
		for _, k := range rule.Keywords {
			k = strings.ToLower(k)
			if _, ok := number[k]; !ok {
				number[k] = len(keywords)
				keywords = append(keywords, k)
				g.byKeyword = append(g.byKeyword, nil)
			}
			g.byKeyword[number[k]] = append(g.byKeyword[number[k]], n)
		}
		rule.Keywords = nil
		g.rules = append(g.rules, rule)
		if _, ok := def.widened[id]; ok {
			g.widenable.add(n)
		}
	}
	g.compiled = make([]*gitleaksre.Regexp, len(g.ids))
	g.compiledW = make([]*gitleaksre.Regexp, len(g.ids))
	index, err := newKeywordIndex(keywords)
	if err != nil {
		return nil, err
	}
	g.keywords = index
	return g, nil
}

// detect returns gitleaks' findings in v.
func (g *gitleaksRules) detect(v string) []report.Finding {
	return g.find(v, false)
}

// find returns gitleaks' findings in v and, with widened, also those of the widened forms of
// the token rules v needs, found in the runs of v that can hold them (boundaries.go).
func (g *gitleaksRules) find(v string, widened bool) []report.Finding {
	var need ruleSet
	for _, n := range g.always {
		need.add(n)
	}
	g.keywords.each(asciiFolded(v), func(k int) {
		for _, n := range g.byKeyword[k] {
			need.add(n)
		}
	})
	if need == nil {
		return nil
	}
	found := g.detector(need, false).DetectString(v)
	if widened {
		if w := need.and(g.widenable); w != nil {
			if runs, ok := widenedRuns(v); ok {
				found = append(found, g.detector(w, true).DetectString(runs)...)
			}
		}
	}
	return slices.DeleteFunc(found, g.stopWords.allowed)
}

// detector returns a detector of the rules in need, in their widened forms with widened.
func (g *gitleaksRules) detector(need ruleSet, widened bool) *detect.Detector {
	var buf [65]byte // which forms, and a set of up to 512 rules: the map key, without an allocation per text
	form := byte(0)
	if widened {
		form = 1
	}
	key := need.appendKey(append(buf[:0], form))
	g.mu.Lock()
	defer g.mu.Unlock()
	if d := g.detectors[string(key)]; d != nil {
		return d
	}
	cfg := g.config
	cfg.Rules = map[string]config.Rule{}
	need.each(func(n int) {
		compiled, text := g.compiled, g.regexes[g.ids[n]]
		if widened {
			compiled, text = g.compiledW, g.widened[g.ids[n]]
		}
		if compiled[n] == nil {
			// The text compiled once already (in Translate, or in widenedRule), so compiling
			// it again cannot fail.
			compiled[n] = gitleaksre.MustCompile(text)
		}
		rule := g.rules[n]
		rule.Regex = compiled[n]
		cfg.Rules[g.ids[n]] = rule
	})
	d := detect.NewDetector(cfg)
	d.MaxDecodeDepth = 0
	if len(g.detectors) < maxDetectors {
		g.detectors[string(key)] = d
	}
	return d
}

// ruleSet is a set of rule numbers, a bit each.
type ruleSet []uint64

func (s *ruleSet) add(n int) {
	for len(*s) <= n/64 {
		*s = append(*s, 0)
	}
	(*s)[n/64] |= 1 << (n % 64)
}

// and returns the rules in both s and t, nil if none.
func (s ruleSet) and(t ruleSet) ruleSet {
	var out ruleSet
	for i := range min(len(s), len(t)) {
		if w := s[i] & t[i]; w != 0 {
			for len(out) <= i {
				out = append(out, 0)
			}
			out[i] = w
		}
	}
	return out
}

func (s ruleSet) each(f func(n int)) {
	for i, w := range s {
		for ; w != 0; w &= w - 1 {
			f(i*64 + bits.TrailingZeros64(w))
		}
	}
}

// appendKey appends the set's bytes, its key in gitleaksRules.detectors.
func (s ruleSet) appendKey(b []byte) []byte {
	for _, w := range s {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}
