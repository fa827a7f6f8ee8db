package pricing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbeddedTableLoads(t *testing.T) {
	tbl := embedded(t)
	providers, models := tbl.Len()
	if providers < 40 || models < 1000 || tbl.Version != EmbeddedVersion {
		t.Fatalf("embedded table: %d providers, %d models, version %q", providers, models, tbl.Version)
	}
}

func TestParseRejectsBadData(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"not a list":      {`{"id":"x"}`, "not a genai-prices provider list"},
		"empty":           {`[]`, "lists no provider"},
		"no models":       {`[{"id":"a","models":[]}]`, "lists no model"},
		"duplicate":       {`[{"id":"a","models":[{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":1}}]},{"id":"a"}]`, `provider "a": listed twice`},
		"negative price":  {`[{"id":"a","models":[{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":-1}}]}]`, "negative"},
		"bad date":        {`[{"id":"a","models":[{"id":"m","match":{"equals":"m"},"prices":[{"constraint":{"start_date":"13/01/2025"},"prices":{"input_mtok":1}}]}]}]`, "start_date"},
		"two clauses":     {`[{"id":"a","models":[{"id":"m","match":{"equals":"m","contains":"m"},"prices":{"input_mtok":1}}]}]`, "exactly one"},
		"bad regex":       {`[{"id":"a","models":[{"id":"m","match":{"regex":"("},"prices":{"input_mtok":1}}]}]`, "match regex"},
		"no prices":       {`[{"id":"a","models":[{"id":"m","match":{"equals":"m"}}]}]`, "prices are missing"},
		"tiers unordered": {`[{"id":"a","models":[{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":{"base":1,"tiers":[{"start":5,"price":2},{"start":1,"price":3}]}}}]}]`, "ascending"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.data), "test")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// A release owner fixing a hand-edited price file needs every problem and where it is: a bad
// price used to stop the decoding with "price -1 is negative", naming no model and hiding the
// other problems (docs/cost.md promises "lists every problem").
func TestParseNamesEveryBadModel(t *testing.T) {
	data := `[{"id":"a","models":[
		{"id":"neg","match":{"equals":"neg"},"prices":{"input_mtok":-1}},
		{"id":"date","match":{"equals":"date"},"prices":[{"constraint":{"start_date":"13/01/2025"},"prices":{"input_mtok":1}}]},
		{"id":"re","match":{"regex":"("},"prices":{"input_mtok":1}}]}]`
	_, err := Parse([]byte(data), "test")
	if err == nil {
		t.Fatal("bad data parsed")
	}
	for _, want := range []string{`provider "a": model "neg": `, `provider "a": model "date": `, `provider "a": model "re": `} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestLoadFileVersion(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "genai-prices-0.9.1.json")
	other := filepath.Join(dir, "prices.json")
	for _, p := range []string{named, other} {
		if err := os.WriteFile(p, embeddedData, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a, err := LoadFile(named)
	if err != nil || a.Version != "0.9.1" {
		t.Fatalf("%v %v", err, a)
	}
	b, err := LoadFile(other)
	if err != nil || !strings.HasPrefix(b.Version, "sha256:") || len(b.Version) != len("sha256:")+12 {
		t.Fatalf("%v %v", err, b)
	}
}
