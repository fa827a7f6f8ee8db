package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/pricing"
	"github.com/reprise-dev/reprise/replaycase"
)

const smallTable = `[{"id":"openai","name":"OpenAI","api_pattern":"x","models":[
	{"id":"gpt-4o","match":{"equals":"gpt-4o"},"prices":[
		{"prices":{"input_mtok":5,"output_mtok":15}},
		{"constraint":{"start_date":"2024-08-06"},"prices":{"input_mtok":2.5,"output_mtok":10}}]}]}]`

func TestPricesUpdateInstallsAValidFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "genai-prices-0.3.0.json")
	require.NoError(t, os.WriteFile(src, []byte(smallTable), 0o600))
	to := filepath.Join(dir, "installed")
	var out, errOut bytes.Buffer
	code := runPrices([]string{"update", "--from", src, "--to", to}, &out, &errOut)
	require.Equal(t, ExitOK, code, errOut.String())
	dest := filepath.Join(to, "genai-prices-0.3.0.json")
	assert.Contains(t, out.String(), "installed "+dest+": 1 providers, 1 models, version 0.3.0")
	assert.Contains(t, out.String(), "price_file: "+dest)
	table, err := pricing.LoadFile(dest)
	require.NoError(t, err)
	assert.Equal(t, "0.3.0", table.Version)
}

func TestPricesUpdateRefusesAnInvalidFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prices.json")
	require.NoError(t, os.WriteFile(src, []byte(`[{"id":"openai","models":[{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":-1}}]}]`), 0o600))
	to := filepath.Join(dir, "installed")
	var out, errOut bytes.Buffer
	code := runPrices([]string{"update", "--from", src, "--to", to}, &out, &errOut)
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut.String(), "not a valid price table, nothing installed")
	assert.Contains(t, errOut.String(), "negative")
	_, err := os.Stat(to)
	assert.True(t, os.IsNotExist(err), "nothing may be installed")
}

func TestPricesShow(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "genai-prices-0.3.0.json")
	require.NoError(t, os.WriteFile(src, []byte(smallTable), 0o600))
	for _, tc := range []struct{ at, want string }{
		{"2024-08-05", "input_mtok             5 USD"},
		{"2024-08-06", "input_mtok             2.5 USD"},
	} {
		var out, errOut bytes.Buffer
		code := runPrices([]string{"show", "gpt-4o", "--provider", "openai", "--price-file", src, "--at", tc.at}, &out, &errOut)
		require.Equal(t, ExitOK, code, errOut.String())
		assert.Contains(t, out.String(), "openai / gpt-4o")
		assert.Contains(t, out.String(), "price changes on: 2024-08-06")
		assert.Contains(t, out.String(), tc.want)
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, ExitChanged, runPrices([]string{"show", "no-such-model"}, &out, &errOut))
	assert.True(t, strings.Contains(errOut.String(), "unpriced"), errOut.String())
	assert.Equal(t, ExitError, runPrices([]string{"show", "gpt-4o", "--at", "yesterday"}, &out, &errOut))
	assert.Contains(t, errOut.String(), `--at: want YYYY-MM-DD or RFC 3339, got "yesterday"`)
}

// 180 input and 34 output tokens of gpt-4o-mini (0.15 and 0.6 USD per million) over two calls.
func TestShowPrintsTheCost(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	code, out, errOut := run(t, "show", cases[0].CaseID, "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "cost: 0.000047 USD (computed, genai-prices 0.2.3)")
	assert.Contains(t, out, "79→17 tokens, 0.000022 USD (computed, genai-prices 0.2.3)")
}

// A call cheaper than half a millionth of a dollar (a short embedding) is not shown as a price
// of 0.000000 USD.
func TestCostTextShowsATinyCost(t *testing.T) {
	usd := 20 * 0.02 / 1e6 // 20 tokens of text-embedding-3-small
	got := costText(&replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: &usd, PricingSource: "genai-prices", PricingVersion: "0.2.3"})
	assert.Equal(t, "0.0000004 USD (computed, genai-prices 0.2.3)", got)
}

// The processor resolves price_file against the collector's working directory, not the one
// `prices update` ran in: the snippet printed for a relative --to (the default, "prices")
// named a path that a collector started elsewhere could not open.
func TestPricesUpdatePrintsAnAbsolutePriceFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("genai-prices-0.3.0.json", []byte(smallTable), 0o600))
	var out, errOut bytes.Buffer
	code := runPrices([]string{"update", "--from", "genai-prices-0.3.0.json"}, &out, &errOut)
	require.Equal(t, ExitOK, code, errOut.String())
	abs, err := filepath.Abs(filepath.Join("prices", "genai-prices-0.3.0.json"))
	require.NoError(t, err)
	assert.Contains(t, out.String(), "price_file: "+abs+"\n")
	_, err = pricing.LoadFile(abs)
	require.NoError(t, err)
}
