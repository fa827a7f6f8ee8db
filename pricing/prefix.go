package pricing

import "strings"

// unprefixed is ref without a leading "<provider>/" that names p, the step's own provider
// (openai/gpt-4o under openai, as LiteLLM-style clients record it), or without Gemini's
// "models/" resource prefix; "" when ref has neither. A prefix naming another provider is kept:
// behind a router or Azure, openai/gpt-4o is that provider's model, priced at its price or not
// at all. Bedrock ids (anthropic.claude-…) have no "/" and are in the table as they are.
func (t *Table) unprefixed(p *provider, ref string) string {
	prefix, rest, ok := strings.Cut(ref, "/")
	if !ok || prefix == "" || rest == "" {
		return ""
	}
	if strings.EqualFold(prefix, "models") || t.findProvider(prefix, "") == p {
		return rest
	}
	return ""
}
