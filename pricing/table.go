package pricing

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Source names the price data set the table comes from; it is written with every figure.
const Source = "genai-prices"

// EmbeddedVersion is the genai-prices release the embedded table was taken from
// (data/snapshot.py writes it from the PyPI package of that version).
const EmbeddedVersion = "0.2.3"

//go:embed data/genai-prices-0.2.3.json
var embeddedData []byte

// Table is a validated price table.
type Table struct {
	// Version is the data version: the genai-prices release, or for a file whose name does not
	// carry one, "sha256:" and the first 12 hex digits of its content, so a figure can always be
	// traced back to the exact file.
	Version   string
	providers []*provider

	cache  sync.Map     // provider name + NUL + model reference → matched
	cached atomic.Int64 // entries stored in cache
}

var (
	embeddedOnce  sync.Once
	embeddedTable *Table
	embeddedErr   error
)

// Embedded returns the table compiled into the binary.
func Embedded() (*Table, error) {
	embeddedOnce.Do(func() { embeddedTable, embeddedErr = Parse(embeddedData, EmbeddedVersion) })
	return embeddedTable, embeddedErr
}

// LoadFile reads and validates a price file. Its version is taken from a name of the form
// genai-prices-<version>.json, else from its content hash.
func LoadFile(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data, VersionOf(path, data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

var versionedName = regexp.MustCompile(`^genai-prices-([0-9A-Za-z][0-9A-Za-z.+_-]*)\.json$`)

// VersionOf names the data version of a price file: the version in its file name, else a hash
// of its content.
func VersionOf(path string, data []byte) string {
	if m := versionedName.FindStringSubmatch(filepath.Base(path)); m != nil {
		return m[1]
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// Parse decodes and validates price data in the genai-prices JSON shape (a list of providers,
// each with models, match clauses and prices). Every problem found is reported, joined.
func Parse(data []byte, version string) (*Table, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var providers []*provider
	if err := dec.Decode(&providers); err != nil {
		return nil, fmt.Errorf("price data is not a genai-prices provider list: %w", err)
	}
	if len(providers) == 0 {
		return nil, errors.New("price data lists no provider")
	}
	var errs []error
	seen := map[string]bool{}
	models := 0
	for i, p := range providers {
		if p == nil || p.ID == "" {
			errs = append(errs, fmt.Errorf("provider %d: id is empty", i))
			continue
		}
		if seen[p.ID] {
			errs = append(errs, fmt.Errorf("provider %q: listed twice", p.ID))
		}
		seen[p.ID] = true
		errs = append(errs, p.validate()...)
		models += len(p.Models)
	}
	if models == 0 {
		errs = append(errs, errors.New("price data lists no model"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Table{Version: version, providers: providers}, nil
}

// Len is the number of providers and models in the table.
func (t *Table) Len() (providers, models int) {
	for _, p := range t.providers {
		models += len(p.Models)
	}
	return len(t.providers), models
}

type provider struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	ModelMatch    *clause  `json:"model_match"`
	ProviderMatch *clause  `json:"provider_match"`
	Fallback      []string `json:"fallback_model_providers"`
	Models        []*model `json:"models"`
}

func (p *provider) validate() []error {
	var errs []error
	for _, c := range []*clause{p.ModelMatch, p.ProviderMatch} {
		if c != nil {
			if err := c.compile(); err != nil {
				errs = append(errs, fmt.Errorf("provider %q: %w", p.ID, err))
			}
		}
	}
	for i, m := range p.Models {
		if m == nil || m.ID == "" {
			errs = append(errs, fmt.Errorf("provider %q: model %d: id is empty", p.ID, i))
			continue
		}
		if err := m.validate(); err != nil {
			errs = append(errs, fmt.Errorf("provider %q: model %q: %w", p.ID, m.ID, err))
		}
	}
	return errs
}

type model struct {
	ID     string      `json:"id"`
	Name   string      `json:"name"`
	Match  *clause     `json:"match"`
	Prices conditional `json:"-"`
	// RawPrices is decoded into Prices by validate, not with the list: a bad price there would
	// end the decoding of the whole file without saying which model it belongs to.
	RawPrices json.RawMessage `json:"prices"`
	// PricesChecked is the date the model's prices were last checked against the provider's
	// price page, when the file records it (the data files of the genai-prices repository do;
	// the PyPI release's data does not).
	PricesChecked string `json:"prices_checked"`
}

func (m *model) validate() error {
	if m.Match == nil {
		return errors.New("match is missing")
	}
	if err := m.Match.compile(); err != nil {
		return err
	}
	if len(m.RawPrices) > 0 {
		err := unmarshalNumbers(m.RawPrices, &m.Prices)
		m.RawPrices = nil // decoded: the table need not hold the text
		if err != nil {
			return err
		}
	}
	if len(m.Prices) == 0 {
		return errors.New("prices are missing")
	}
	if m.PricesChecked != "" {
		if _, err := time.Parse(time.DateOnly, m.PricesChecked); err != nil {
			return fmt.Errorf("prices_checked %q is not a date (YYYY-MM-DD)", m.PricesChecked)
		}
	}
	return nil
}

// conditional is a model's prices: one set, or a list of sets each in force under a constraint;
// the last set whose constraint holds wins.
type conditional []priceSet

type priceSet struct {
	Constraint *constraint `json:"constraint"`
	Prices     prices      `json:"prices"`
}

func (c *conditional) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var sets []priceSet
		if err := unmarshalNumbers(b, &sets); err != nil {
			return err
		}
		*c = sets
		return nil
	}
	var p prices
	if err := unmarshalNumbers(b, &p); err != nil {
		return err
	}
	*c = conditional{{Prices: p}}
	return nil
}

// constraint limits when a price set is in force: from a UTC date on, or during a daily UTC
// interval (off-peak prices).
type constraint struct {
	StartDate string `json:"start_date"`
	StartTime string `json:"start_time"`
	EndTime   string `json:"end_time"`

	date       time.Time
	start, end time.Duration
}

func (c *constraint) UnmarshalJSON(b []byte) error {
	type plain constraint
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	switch {
	case c.StartDate != "":
		d, err := time.Parse(time.DateOnly, c.StartDate)
		if err != nil {
			return fmt.Errorf("constraint start_date %q is not a date (YYYY-MM-DD)", c.StartDate)
		}
		c.date = d
	case c.StartTime != "" && c.EndTime != "":
		var err error
		if c.start, err = timeOfDay(c.StartTime); err != nil {
			return err
		}
		if c.end, err = timeOfDay(c.EndTime); err != nil {
			return err
		}
	default:
		return fmt.Errorf("constraint %s names neither start_date nor start_time and end_time", b)
	}
	return nil
}

// timeOfDay parses a UTC time of day as the data writes it (15:04:05, optionally with a zone).
func timeOfDay(s string) (time.Duration, error) {
	for _, layout := range []string{"15:04:05Z07:00", "15:04:05", "15:04Z07:00", "15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second, nil
		}
	}
	return 0, fmt.Errorf("constraint time %q is not a time of day (HH:MM:SS)", s)
}

// active reports whether the constraint holds at t (UTC), as genai-prices decides it.
func (c *constraint) active(t time.Time) bool {
	t = t.UTC()
	if c.StartDate != "" {
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return !day.Before(c.date)
	}
	tod := t.Sub(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC))
	if c.end < c.start {
		return tod >= c.start || tod < c.end
	}
	return c.start <= tod && tod < c.end
}

// prices holds a price set's prices by key (input_mtok, output_mtok, cache_read_mtok …), each a
// flat or tiered price in USD per unit (per million tokens for *_mtok keys), sorted by key. A
// slice rather than a map of pointers: the table's ~2,600 price sets hold a few keys each, and
// their maps were a quarter of the heap the table holds for the life of the process
// (`go test -count 1 -run TestTableHeap -v ./pricing/`: 2.10 MB with maps, 1.61 MB without).
type prices []keyedPrice

type keyedPrice struct {
	key string
	tiered
}

// get returns the price of key, nil when the set has none.
func (p prices) get(key string) *tiered {
	for i := range p {
		if p[i].key == key {
			return &p[i].tiered
		}
	}
	return nil
}

// UnmarshalJSON reads the data's object of prices; a key whose price is null has none.
func (p *prices) UnmarshalJSON(b []byte) error {
	var byKey map[string]*tiered
	if err := unmarshalNumbers(b, &byKey); err != nil {
		return err
	}
	out := make(prices, 0, len(byKey))
	for k, t := range byKey {
		if t != nil {
			out = append(out, keyedPrice{key: k, tiered: *t})
		}
	}
	slices.SortFunc(out, func(a, b keyedPrice) int { return strings.Compare(a.key, b.key) })
	*p = out
	return nil
}

// tiered is a price, flat when Tiers is empty. Crossing a tier's start in input tokens prices
// every token at that tier (genai-prices' "cliff" rule). Prices are held as float64: a figure
// is then within a few units in the last place of the exact decimal one (the dataset stores
// doubles anyway), and pricing a call allocates nothing.
type tiered struct {
	Base  float64
	Tiers []tier
}

type tier struct {
	Start int64 // input tokens above which the tier applies
	Price float64
}

func (p *tiered) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '{' {
		f, err := price(b)
		p.Base = f
		return err
	}
	var raw struct {
		Base  json.Number `json:"base"`
		Tiers []struct {
			Start json.Number `json:"start"`
			Price json.Number `json:"price"`
		} `json:"tiers"`
	}
	if err := unmarshalNumbers(b, &raw); err != nil {
		return err
	}
	var err error
	if p.Base, err = price([]byte(raw.Base)); err != nil {
		return err
	}
	prev := int64(-1)
	for _, t := range raw.Tiers {
		start, err := t.Start.Int64()
		if err != nil || start < 0 || start < prev {
			return fmt.Errorf("tier start %q must be a whole number of tokens, ascending", t.Start)
		}
		f, err := price([]byte(t.Price))
		if err != nil {
			return err
		}
		prev = start
		p.Tiers = append(p.Tiers, tier{Start: start, Price: f})
	}
	return nil
}

// price parses a finite, non-negative price.
func price(b []byte) (float64, error) {
	s := strings.TrimSpace(string(b))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("price %q is not a finite number", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("price %s is negative", s)
	}
	return f, nil
}

func unmarshalNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
