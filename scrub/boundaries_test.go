package scrub

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// tokenKinds are the planted kinds that are found by their own shape (a prefix, a checksum),
// without a name or scheme word before them.
var tokenKinds = []string{"openai_api_key", "anthropic_api_key", "gcp_api_key", "aws_access_token", "github_pat",
	"gitlab_pat", "stripe_access_token", "stripe_webhook_secret", "npm_access_token", "huggingface_access_token", "jwt",
	"phone_number", "payment_card", "iban", "us_ssn", "ip_address"}

// A key whose gitleaks rule needs a quote, a space or ';' after it was not found before '/',
// '(', '=', '#', ':' … (a URL's path, a call, a fragment), nor after '_', which \b takes for a
// letter (boundaries.go); the same '_' hid card numbers and keys from Reprise's own rules.
func TestSecretsTouchingPunctuationAndUnderscores(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, p := range scrubtest.Planted {
		if !slices.Contains(tokenKinds, p.Kind) {
			continue
		}
		for _, around := range []string{"https://x.example/%s/more", "https://x.example/%s", "GET /v1/%s?x=1", "f(%s)", "k=%s=", "%s#frag",
			"%s&next=1", "[%s]:8080", "%s:8080", "{%s}", "<%s>", "id_%s", "_%s", "x-%s", "%s,x", "%s.x", "%s|x", "%s;x", "%s@x", "%s!x", "%s\\x",
			"İ%s", "\u212a%s"} { // runes that fold to a letter (fold.go), but are none as written
			if p.Kind == "ip_address" && around == "%s:8080" && p.Text[4] == ':' {
				continue // an IPv6 address and a port without brackets are one address
			}
			in := fmt.Sprintf(around, p.Text)
			if p.Kind == "ip_address" && around == "%s.x" {
				continue // "203.0.113.42.x": an IPv4 address runs on into more dotted parts
			}
			out := s.Text(in, &Report{})
			assert.NotContains(t, out, p.Must(), in)
			assert.Contains(t, out, "<secret:"+p.Kind+":", in)
			assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %s", in)
		}
	}
	// Personal data has no '_' of its own: one after it ends it as well (a key's '_' or '-' is
	// part of a longer key, and stays so).
	for _, p := range scrubtest.Planted {
		if slices.Contains([]string{"phone_number", "payment_card", "iban", "us_ssn", "ip_address"}, p.Kind) {
			in := "card_" + p.Text + "_exp"
			out := s.Text(in, &Report{})
			assert.NotContains(t, out, p.Must(), in)
		}
	}
}

// What the wider boundaries must not take: a letter or digit still touches no secret (sk- in
// a word, digits in hex), and rules that take a bare shape when a keyword is anywhere in the
// text (sourcegraph: any 40 hex digits) are not widened.
func TestWiderBoundariesKeepWordsAndIDs(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		"see task-management-system-overview-2024/notes and disk-usage-report-2024-11-30/x",
		"sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855/blob",
		"trace_id=4bf92f3577b34da6a3ce929d0e0e4736&span_id=00f067aa0ba902b7",
		"https://sourcegraph.com/github.com/golang/go/-/commit/3f9a1c0b2d4e5f60718293a4b5c6d7e8f9a0b1c2/main.go",
		"for child in children[::2]: print(child_1234)",
		"build_20241130_1200 v1.2.3_rc1 run_000000001",
		"the user_token_count_limit(2048) and max_tokens=4096",
	} {
		assert.Equal(t, in, s.Text(in, &Report{}))
	}
}

// FuzzKeysTouchingPunctuation: a planted key or card number is masked whatever comes before
// and after it, unless a letter or digit touches it, or one of its own characters ('_', '-')
// follows it (then it is part of a longer token).
// Run: go test -run '^$' -fuzz FuzzKeysTouchingPunctuation -fuzztime 60s ./scrub/
func FuzzKeysTouchingPunctuation(f *testing.F) {
	var values []scrubtest.Value
	for _, p := range scrubtest.Planted {
		if slices.Contains([]string{"gcp_api_key", "stripe_access_token", "npm_access_token", "huggingface_access_token", "jwt", "openai_api_key", "payment_card"}, p.Kind) {
			values = append(values, p)
		}
	}
	for _, seed := range [][2]string{{"https://x/", "/more"}, {"id_", "#x"}, {"f(", ")"}, {"k=", "&y=1"}, {"[", "]:8080"}} {
		f.Add(seed[0], seed[1], uint8(0))
	}
	s := newScrubber(f, Config{Enabled: true, Key: "fuzz"})
	word := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	f.Fuzz(func(t *testing.T, before, after string, which uint8) {
		if len(before) > 64 || len(after) > 64 {
			return // a long base64-looking neighbour makes an opaque blob, which the text rules skip
		}
		if before != "" && word(before[len(before)-1]) || after != "" && (word(after[0]) || after[0] == '_' || after[0] == '-') {
			return // by design: see boundaries.go
		}
		p := values[int(which)%len(values)]
		if p.Kind == "payment_card" && strings.ContainsAny(before, "0123456789") {
			return // "0000 4111 1111 1111 1111": digit groups before a card take it in (not fixed, docs/scrubbing.md)
		}
		in := before + p.Text + after
		if out := s.Text(in, &Report{}); strings.Contains(out, p.Must()) {
			t.Fatalf("%s survived in %q: %q", p.Kind, in, out)
		}
	})
}

// The widened rules are run only on runs of at least minWidenedRun characters of
// inWidenedRun, which holds for the secrets of these rules (boundaries.go): a gitleaks upgrade
// that adds or changes a token rule fails here, to be checked against that assumption.
func TestWidenedRulesAreTheReviewedOnes(t *testing.T) {
	cfg, err := gitleaksDefault()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range cfg.widened {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	assert.Equal(t, []string{"1password-secret-key", "adobe-client-secret", "airtable-personnal-access-token", "alibaba-access-key-id",
		"anthropic-admin-api-key", "anthropic-api-key", "artifactory-api-key", "artifactory-reference-token",
		"authress-service-client-access-key", "aws-access-token", "aws-amazon-bedrock-api-key-long-lived",
		"clickhouse-cloud-api-secret-key", "cloudflare-origin-ca-key", "databricks-api-token", "digitalocean-access-token",
		"digitalocean-pat", "digitalocean-refresh-token", "easypost-api-token", "easypost-test-api-token",
		"facebook-page-access-token", "flyio-access-token", "gcp-api-key", "gitlab-pat-routable",
		"gitlab-runner-authentication-token-routable", "grafana-api-key", "grafana-cloud-api-token",
		"grafana-service-account-token", "heroku-api-key-v2", "huggingface-access-token", "huggingface-organization-api-token",
		"infracost-api-token", "intra42-client-secret", "jwt", "notion-api-token", "npm-access-token", "octopus-deploy-api-key",
		"openai-api-key", "planetscale-api-token", "planetscale-oauth-token", "planetscale-password", "postman-api-token",
		"prefect-api-token", "pulumi-api-token", "readme-api-token", "rubygems-api-token", "scalingo-api-token",
		"sendgrid-api-token", "sendinblue-api-token", "sentry-user-token", "settlemint-application-access-token",
		"settlemint-personal-access-token", "settlemint-service-access-token", "shippo-api-token", "square-access-token",
		"stripe-access-token", "vault-batch-token"}, ids)
	for _, p := range scrubtest.Planted {
		if slices.Contains([]string{"gcp_api_key", "stripe_access_token", "npm_access_token", "huggingface_access_token", "jwt", "aws_access_token"}, p.Kind) {
			runs, ok := widenedRuns("(" + p.Text + ")")
			assert.True(t, ok, p.Text)
			assert.Contains(t, runs, p.Text)
		}
	}
	assert.Equal(t, "sk_live_0123456789\n", func() string { r, _ := widenedRuns("a sk_live_0123456789 b sk_live_0123456789"); return r }(), "each run once")
}
