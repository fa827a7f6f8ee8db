package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/pricing"
	"github.com/reprise-dev/reprise/replaycase"
)

// prices registers itself so that the command table in cli.go stays as it is.
func init() {
	commands["prices"] = command{"show the price of a model, or install a newer price table", runPrices}
}

func runPrices(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "update":
			return runPricesUpdate(args[1:], stdout, stderr)
		case "show":
			return runPricesShow(args[1:], stdout, stderr)
		}
	}
	const usage = "usage: reprise prices update --from FILE [--to DIR] [--version V] | reprise prices show MODEL [--provider P] [--at DATE] [--price-file FILE]"
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "-help") {
		fmt.Fprintln(stdout, usage)
		return ExitOK
	}
	fmt.Fprintln(stderr, usage)
	return ExitError
}

// runPricesUpdate validates a genai-prices data file and installs it as
// DIR/genai-prices-<version>.json, the name the processor reads the version from.
func runPricesUpdate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("prices update", "usage: reprise prices update --from FILE [--to DIR] [--version V]")
	from := fs.String("from", "", "genai-prices JSON file to install (prices/data.json of the genai-prices repository, or written by pricing/data/snapshot.py)")
	to := fs.String("to", "prices", "directory to install it in")
	version := fs.String("version", "", "data version to record with every cost (default: the version in the file name, else a hash of its content)")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	if *from == "" || len(pos) > 0 {
		return usageError(stdout, stderr, fs, errors.New("want --from FILE and no other argument"))
	}
	data, err := os.ReadFile(*from)
	if err != nil {
		fmt.Fprintln(stderr, "reprise prices update:", err)
		return ExitError
	}
	v := *version
	if v == "" {
		v = pricing.VersionOf(*from, data)
	}
	v = strings.TrimPrefix(v, "sha256:")
	// The version becomes the installed file's name, from which the processor reads it back:
	// one like "x/../../y" would be written outside --to, and one the processor cannot read
	// back would be recorded as a content hash instead.
	if !installableVersion.MatchString(v) {
		return usageError(stdout, stderr, fs, fmt.Errorf("--version %q: want letters, digits and . + _ - (starting with a letter or digit)", v))
	}
	table, err := pricing.Parse(data, v)
	if err != nil {
		fmt.Fprintf(stderr, "reprise prices update: %s is not a valid price table, nothing installed:\n%v\n", *from, err)
		return ExitError
	}
	// Absolute, so that the snippet printed below works in a collector started from another
	// directory: the processor resolves price_file against its own working directory.
	dest, err := filepath.Abs(filepath.Join(*to, "genai-prices-"+v+".json"))
	if err != nil {
		fmt.Fprintln(stderr, "reprise prices update:", err)
		return ExitError
	}
	if err := writeAtomic(dest, data); err != nil {
		fmt.Fprintln(stderr, "reprise prices update:", err)
		return ExitError
	}
	providers, models := table.Len()
	fmt.Fprintf(stdout, "installed %s: %d providers, %d models, version %s\n", dest, providers, models, v)
	fmt.Fprintf(stdout, "use it with the processor option:\n  replay_case:\n    pricing:\n      price_file: %s\n", dest)
	return ExitOK
}

// installableVersion is a version that names a file in --to: the form pricing.VersionOf reads
// from genai-prices-<version>.json.
var installableVersion = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.+_-]*$`)

// writeAtomic writes data to path, creating its directory, through a temporary file in the
// same directory (writeFileAtomic), so a collector starting meanwhile never reads half a file.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(path, data, 0o644)
}

func runPricesShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("prices show", "usage: reprise prices show MODEL [--provider P] [--at DATE] [--price-file FILE]")
	provider := fs.String("provider", "", "provider name as recorded (gen_ai.provider.name); default: the provider whose models match")
	atDate := fs.String("at", "", "the price in force at this UTC date or time (YYYY-MM-DD or RFC 3339); default: now")
	priceFile := fs.String("price-file", "", "price file to read (default: the table built into this binary)")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	if len(pos) != 1 {
		return usageError(stdout, stderr, fs, fmt.Errorf("want one model, got %d", len(pos)))
	}
	when := time.Now().UTC()
	if *atDate != "" {
		if when, err = parseTime(*atDate); err != nil {
			return usageError(stdout, stderr, fs, fmt.Errorf("--at: %w", err))
		}
	}
	var table *pricing.Table
	if *priceFile != "" {
		table, err = pricing.LoadFile(*priceFile)
	} else {
		table, err = pricing.Embedded()
	}
	if err != nil {
		fmt.Fprintln(stderr, "reprise prices show:", err)
		return ExitError
	}
	q, err := table.Lookup(*provider, pos, when)
	if err != nil {
		fmt.Fprintf(stderr, "reprise prices show: %v (%s %s): a run with this model is recorded as unpriced\n", err, pricing.Source, table.Version)
		return ExitChanged
	}
	fmt.Fprintf(stdout, "%s / %s", q.ProviderID, q.ModelID)
	if q.ModelName != "" {
		fmt.Fprintf(stdout, " (%s)", q.ModelName)
	}
	fmt.Fprintf(stdout, "\n  source %s %s, price in force at %s", pricing.Source, table.Version, when.Format(time.RFC3339))
	if q.EffectiveDate != "" {
		fmt.Fprintf(stdout, " (since %s)", q.EffectiveDate)
	}
	fmt.Fprintln(stdout)
	if len(q.PriceDates) > 0 {
		fmt.Fprintf(stdout, "  price changes on: %s\n", strings.Join(q.PriceDates, ", "))
	}
	if q.PriceChecked != "" {
		fmt.Fprintf(stdout, "  prices checked: %s\n", q.PriceChecked)
	}
	for _, l := range q.Lines() {
		fmt.Fprintf(stdout, "  %-22s %v USD", l.Key, l.Base)
		for _, t := range l.Tiers {
			fmt.Fprintf(stdout, ", above %d input tokens %v USD", t.Start, t.Price)
		}
		fmt.Fprintln(stdout)
	}
	return ExitOK
}

// costText is a cost for a person: the figure of record, how it was obtained and from which
// prices ("0.001380 USD (computed, genai-prices 0.2.3)"), or why there is none.
func costText(c *replaycase.Cost) string {
	src := strings.TrimSpace(c.PricingSource + " " + c.PricingVersion)
	if c.TotalUSD == nil {
		return fmt.Sprintf("no cost (%s: %s)", c.Status, c.Detail)
	}
	s := fmt.Sprintf("%s USD (%s", pricing.FormatUSD(*c.TotalUSD), c.Status)
	if c.Status == replaycase.CostProviderReported && c.ComputedUSD != nil {
		s += fmt.Sprintf("; %s USD by %s", pricing.FormatUSD(*c.ComputedUSD), src)
	} else if src != "" {
		s += ", " + src
	}
	if c.OverBudget && c.BudgetUSD != nil {
		s += fmt.Sprintf("; over the budget of %s USD", pricing.FormatUSD(*c.BudgetUSD))
	}
	return s + ")"
}
