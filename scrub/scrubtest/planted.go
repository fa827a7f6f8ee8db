// Package scrubtest holds planted secrets and personal data shared by the scrub tests and the
// planted-secrets test of the whole pipeline.
package scrubtest

// Value is one planted value: its kind, the text as it appears, and the byte string that must
// not survive scrubbing (for some kinds a part of the text; empty means the whole text).
type Value struct{ Kind, Text, Secret string }

// Must is the byte string that must not survive.
func (v Value) Must() string {
	if v.Secret != "" {
		return v.Secret
	}
	return v.Text
}

// Planted is one value of each kind the scrubber must catch, as it appears in real text, with
// the byte string that must not survive (for some kinds a part of the text). The values are
// made up: cards and IBANs pass their checksums, phone numbers libphonenumber's validation,
// keys have the providers' shapes. The key without an END line swallows the lines after it,
// so it comes last.
var Planted = []Value{
	{"openai_api_key", "sk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE", ""},
	{"anthropic_api_key", "sk-ant-api03-Zp8Lm2Qw9Rt4Yx7Vb1Nc3Kd6Fg0Hj5", ""},
	{"gcp_api_key", "AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z", ""},
	{"aws_access_token", "AKIAQYLPMN5HHHFPZAM2", ""},
	{"aws_secret_access_key", "AWS key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"github_pat", "ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU", ""},
	{"gitlab_pat", "glpat-Ab3De6Gh9Jk2Mn5Pq8St", ""},
	{"slack_bot_token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", ""},
	{"slack_webhook_url", "https://hooks.slack.com/services/T02ABCDEF/B03GHIJKL/aBcDeFgHiJkLmNoPqRsTuVwX", "aBcDeFgHiJkLmNoPqRsTuVwX"},
	{"stripe_access_token", "sk_live_51HxYzAbCdEfGhIjKlMnOpQr", ""},
	{"stripe_webhook_secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", ""},
	{"azure_storage_account_key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=q8Vt3mZ1pL6kR9wX2yB5nC7dF0gH4jK1lM3oP6sT8uV0xY2zA4bD6eG8hJ1kM3nQ5rS7tW9vX1yZ3aB5cE7fH9i==;EndpointSuffix=core.windows.net", "q8Vt3mZ1pL6kR9wX2yB5nC7dF0gH4jK1lM3oP6sT8uV0xY2zA4bD6eG8hJ1kM3nQ5rS7tW9vX1yZ3aB5cE7fH9i"},
	{"azure_sas_signature", "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&se=2026-12-01T00:00:00Z&sig=Q2xS9kPz8yLr%2Bq7W3vNmT1uXbYc4dEfGhIjKlMnOpQ%3D", "Q2xS9kPz8yLr%2Bq7W3vNmT1uXbYc4dEfGhIjKlMnOpQ%3D"},
	{"url_query_secret", "https://maps.example.com/geocode?q=Paris&key=Gq7Lm2Xw9Rt4Yz1V", "Gq7Lm2Xw9Rt4Yz1V"},
	{"npm_access_token", "npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", ""},
	{"huggingface_access_token", "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", ""},
	{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.c2lnbmF0dXJlLXZhbHVlLTEyMzQ", ""},
	{"bearer_token", "Bearer Zm9vYmFyLXRva2VuLTEyMzQ1Njc4OTA", "Zm9vYmFyLXRva2VuLTEyMzQ1Njc4OTA"},
	{"basic_auth", "Basic YWxpY2U6czNjcjN0LXBhc3M=", "YWxpY2U6czNjcjN0LXBhc3M="},
	{"pem_private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn"},
	{"pem_private_key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF2sVf0BCAC7x9p2q8mN4vR1tY6uI3oP5aS7dF9gH2jK4lZ6xC8vB0nM1qW3\n=Ab3d\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF2sVf0BCAC7x9p2q8mN4vR1tY6uI3oP5aS7dF9gH2jK4lZ6xC8vB0nM1qW3"},
	{"url_password", "postgres://app:Sup3rS3cretPw@db.internal:5432/prod", "Sup3rS3cretPw"},
	{"secret_field", "host=db.internal port=5432 user=app password=Tr0ub4dor&3 dbname=prod", "Tr0ub4dor&3"},
	{"secret_field", "https://api.example.com/v1/data?api_key=9f8e7d6c5b4a39281706&format=json", "9f8e7d6c5b4a39281706"},
	{"email", "jane.doe@example-corp.com", ""},
	{"phone_number", "+1 415-555-0132", "415-555-0132"},
	{"phone_number", "2015550123", ""},
	{"phone_number", "+44 20 7946 0958", "20 7946 0958"},
	{"phone_number", "020 7946 0958", ""},
	{"phone_number", "06 12 34 56 78", ""},
	{"payment_card", "4111 1111 1111 1111", ""},
	{"payment_card", "5500.0000.0000.0004", ""},
	{"iban", "DE89 3704 0044 0532 0130 00", ""},
	{"iban", "fr1420041010050500013m02606", ""},
	{"us_ssn", "078-05-1120", ""},
	{"ip_address", "203.0.113.42", ""},
	{"ip_address", "2001:db8:85a3::8a2e:370:7334", ""},
	{"pem_private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"},
}
