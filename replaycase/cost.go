package replaycase

// CostStatus says how a cost figure was obtained.
type CostStatus string

const (
	// CostComputed: every token count was priced with the price table.
	CostComputed CostStatus = "computed"
	// CostProviderReported: the provider or the instrumentation reported the cost; it is kept as
	// the cost of record and the table's figure, when there is one, is written beside it.
	CostProviderReported CostStatus = "provider_reported"
	// CostUnpriced: no price was found (unknown provider or model, or no usage recorded); no
	// figure is guessed.
	CostUnpriced CostStatus = "unpriced"
	// CostPartial: some token counts had no price (a step), or some steps are unpriced (a case);
	// the figure covers only what was priced.
	CostPartial CostStatus = "partial"
)

// Cost is what a step or a case cost in US dollars, and which prices produced the figure.
// Nil pointers mean "no figure", never zero. docs/cost.md describes every rule.
type Cost struct {
	Status CostStatus `json:"status" parquet:"status,dict"`
	// TotalUSD is the cost of record: the reported cost when there is one, else the computed one.
	TotalUSD *float64 `json:"total_usd,omitempty" parquet:"total_usd,optional"`
	// ComputedUSD is the price table's figure (the sum of the five parts below).
	ComputedUSD *float64 `json:"computed_usd,omitempty" parquet:"computed_usd,optional"`
	// ReportedUSD is the cost the provider or the instrumentation reported.
	ReportedUSD *float64 `json:"reported_usd,omitempty" parquet:"reported_usd,optional"`
	// The computed figure by token kind; they do not overlap: input is the uncached input, output
	// excludes reasoning.
	InputUSD      *float64 `json:"input_usd,omitempty" parquet:"input_usd,optional"`
	OutputUSD     *float64 `json:"output_usd,omitempty" parquet:"output_usd,optional"`
	CacheReadUSD  *float64 `json:"cache_read_usd,omitempty" parquet:"cache_read_usd,optional"`
	CacheWriteUSD *float64 `json:"cache_write_usd,omitempty" parquet:"cache_write_usd,optional"`
	ReasoningUSD  *float64 `json:"reasoning_usd,omitempty" parquet:"reasoning_usd,optional"`

	// PricingSource and PricingVersion name the price data (genai-prices and its release).
	PricingSource  string `json:"pricing_source,omitempty" parquet:"pricing_source,optional,dict"`
	PricingVersion string `json:"pricing_version,omitempty" parquet:"pricing_version,optional,dict"`
	// PriceChecked is the date the data last checked the model's prices, when it records one.
	PriceChecked string `json:"price_checked,omitempty" parquet:"price_checked,optional,dict"`
	// ProviderID and ModelID are the price table's provider and model that matched.
	ProviderID string `json:"provider_id,omitempty" parquet:"provider_id,optional,dict"`
	ModelID    string `json:"model_id,omitempty" parquet:"model_id,optional,dict"`
	// EffectiveDate is the start date (YYYY-MM-DD, UTC) of the price in force at the step's start
	// time; empty when the model has had one price throughout.
	EffectiveDate string `json:"effective_date,omitempty" parquet:"effective_date,optional,dict"`
	// Tier names the long-context tier applied ("input_tokens>200000"), empty for base prices.
	Tier string `json:"tier,omitempty" parquet:"tier,optional,dict"`
	// UnitPrices are the prices used, USD per million tokens, by token kind.
	UnitPrices *UnitPrices `json:"unit_prices,omitempty" parquet:"unit_prices,optional"`
	// Detail says why a figure is unpriced or partial.
	Detail string `json:"detail,omitempty" parquet:"detail,optional"`

	// BudgetUSD and OverBudget (cases only): the configured limit and whether the cost of record
	// exceeds it.
	BudgetUSD  *float64 `json:"budget_usd,omitempty" parquet:"budget_usd,optional"`
	OverBudget bool     `json:"over_budget,omitempty" parquet:"over_budget,optional"`
}

// UnitPrices are the prices a figure was computed with, in USD per million tokens. A kind
// without a price of its own is priced as its parent (cache tokens as input, reasoning tokens as
// output), as genai-prices does, and shows that price here.
type UnitPrices struct {
	Input      *float64 `json:"input,omitempty" parquet:"input,optional"`
	Output     *float64 `json:"output,omitempty" parquet:"output,optional"`
	CacheRead  *float64 `json:"cache_read,omitempty" parquet:"cache_read,optional"`
	CacheWrite *float64 `json:"cache_write,omitempty" parquet:"cache_write,optional"`
	Reasoning  *float64 `json:"reasoning,omitempty" parquet:"reasoning,optional"`
}
