// Package pricing turns a step's token usage into US dollars with a price table, and says which
// prices produced the figure.
//
// The table is the MIT-licensed genai-prices data from pydantic (data/genai-prices-<version>.json,
// embedded, so no network is needed at run time); a newer file of the same shape can replace it
// (processor option pricing.price_file, `reprise prices update --from FILE`). docs/cost.md
// describes every rule: how a provider and a model are matched, which price is in force at a
// step's start time, tiers, cache and reasoning tokens, and the cost_status of each figure.
package pricing
