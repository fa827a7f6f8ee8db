package scrub

import (
	"math/big"
	"net/netip"
	"regexp"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// cardNumber is the shape of a payment card number: 13 to 19 digits, with at most one space,
// '.' or '-' between two of them. It is searched for in text and, when a match fails the
// checksum, matched whole against the parts of the match (detector.part).
const cardNumber = `\d(?:[ .-]?\d){12,18}`

// emailAddress is the shape of an e-mail address, its local part and domain in any script
// (josé@example.com, müller@exämple.de: \b and [A-Za-z] would cut them and leave part of the
// name), its @ also percent-encoded as in a URL's query (?email=alice%40example.com). Group 1
// is the address; what comes before it is not a letter, digit or local-part character, which
// \b, ASCII-only in Go, cannot say. What comes after it is no letter or digit either: the
// domain took in every letter, and a digit after it (8@7.BY1@7.BY) left an address cut at the
// digit, which became a placeholder, and the second pass found the address the digit starts,
// no longer touched, so scrubbing was not idempotent. \b asks it without taking the character
// (a@b.co,c@d.co keeps its ',' for the next address), after a domain that ends with an ASCII
// letter (group 1); after another letter (.テスト, group 2) it cannot, and that one is taken as
// before.
const emailAddress = `(?:^|[^\p{L}\p{N}._%+-])(?:(` + emailBody + `\p{L}*[A-Za-z])\b|(` + emailBody + `\p{L}*[^\x00-\x7F\P{L}]))`

// emailBody is an address up to the last letter of its top-level domain.
const emailBody = `[\p{L}\p{N}._%+-]+(?:@|%40)[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}`

// personalDetectors find personal data. Each candidate shape is confirmed by a check (Luhn,
// mod-97, libphonenumber's validation, an address parse) so ordinary numbers stay.
func personalDetectors(phoneRegions []string) []detector {
	ds := []detector{
		{kind: "email", hints: []string{"@", "%40"}, re: regexp.MustCompile(emailAddress), group: 1},
		// Between wordStart and wordEnd (detectors.go): '_' is a boundary (id_4111111111111111_x).
		// (?i) only inside the value: a case-insensitive [^A-Za-z] would not match the Kelvin
		// sign, which folds to k.
		{kind: "iban", minDigits: ibanMinDigits, re: regexp.MustCompile(wordStart + `((?i)[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?)` + wordEnd), group: 1, valid: ibanChecksum},
		{kind: "payment_card", minDigits: 13, re: regexp.MustCompile(wordStart + `(` + cardNumber + `)` + wordEnd), group: 1, valid: luhn, part: regexp.MustCompile(`^` + cardNumber + `$`)},
		{kind: "us_ssn", minDigits: 9, re: regexp.MustCompile(wordStart + `(\d{3}-\d{2}-\d{4})` + wordEnd), group: 1, valid: ssn},
		{kind: "ip_address", minDigits: 4, re: regexp.MustCompile(wordStart + `((?:\d{1,3}\.){3}\d{1,3})` + wordEnd), group: 1, valid: ipAddress},
		// An IPv6 address ends with a hex group or "::", never with one colon: "2001:db8::1:" (a
		// colon after it, as in prose or a log line) was taken whole, failed the parse and was
		// lost. Leftmost-longest, so that "2001:db8:8000::" is not cut to "2001:db8:8000". A
		// letter or digit after it touches it, as one before it does (wordEnd after a group, \B or _
		// after "::"): "3::a2ea3::" was taken up to the 3, and once it was a placeholder the
		// second pass found "3::", and scrubbing was not idempotent.
		{kind: "ip_address", hints: []string{":"}, re: longest(`(?:^|[^0-9A-Za-z:])(?i:(` + ipv6Head + `(?::[0-9a-f]{0,4}){1,6}:[0-9a-f]{1,4})` + wordEnd + `|(` + ipv6Head + `(?::[0-9a-f]{0,4}){0,6}::)(?:\B|_))`), group: 1, valid: ipAddress},
		// part: a run of digit groups that is no valid number is searched for one between its
		// separators, as for cards: "0100000000 00@0.aa" matches as 12 digits, and the number
		// was found only once the address after it had become a placeholder.
		{kind: "phone_number", minDigits: 7, re: regexp.MustCompile(`(\+\d(?:[ .-]?\(?\d{1,4}\)?){2,7}\d)` + wordEnd + `|` + wordStart + `(\d(?:[ .-]?\(?\d{1,4}\)?){2,7}\d)` + wordEnd + `|(\(\d{2,4}\)[ .-]?\d(?:[ .-]?\d{1,4}){1,5})` + wordEnd), group: 1, valid: phoneNumber(phoneRegions),
			part: regexp.MustCompile(`^\+?\d(?:[ .-]?\(?\d{1,4}\)?){2,7}\d$`)},
	}
	for i := range ds {
		ds[i].personal = true
	}
	return ds
}

// ipv6Head is the first group of an IPv6 address, or none.
const ipv6Head = `[0-9a-f]{0,4}`

// longest compiles a regular expression that prefers the longest of the matches at a position.
func longest(expr string) *regexp.Regexp {
	re := regexp.MustCompile(expr)
	re.Longest()
	return re
}

// luhn validates a payment card number.
func luhn(s string) bool {
	var digits []int
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits = append(digits, int(r-'0'))
		}
	}
	if len(digits) < 13 || len(digits) > 19 || digits[0] < 2 || digits[0] > 6 {
		return false
	}
	sum := 0
	for i := range digits {
		d := digits[len(digits)-1-i]
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// ibanMinDigits is the fewest digits an IBAN is taken with. The IBAN itself must hold them, not
// only the text around it: the text's digits alone (the prefilter) let a second pass find
// "Nx81NNNNNNx81secret" once the value after it had become a placeholder, whose hash holds
// digits, and scrubbing was not idempotent.
const ibanMinDigits = 10

// ibanChecksum validates an IBAN, in any letter case, with the ISO 13616 mod-97 check.
func ibanChecksum(s string) bool {
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	if len(s) < 15 || len(s) > 34 || countDigits(s) < ibanMinDigits {
		return false
	}
	var b strings.Builder
	for _, r := range s[4:] + s[:4] {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteString(big.NewInt(int64(r - 'A' + 10)).String())
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// ssn rejects numbers the SSA never issues: area 000, 666 or 900–999, group 00, serial 0000.
func ssn(s string) bool {
	area, group, serial := s[0:3], s[4:6], s[7:11]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

// phoneNumber accepts a number that libphonenumber parses and validates: with a leading + in
// any region, otherwise in one of the regions' national formats (US 10 digits with or without
// separators, UK 0…, French 0…).
func phoneNumber(regions []string) func(string) bool {
	return func(s string) bool {
		if n := countDigits(s); n < 7 || n > 15 || strings.Count(s, ".") == 3 {
			return false // 3 dots: an IPv4 address or a version, not a phone number
		}
		if strings.HasPrefix(s, "+") {
			num, err := phonenumbers.Parse(s, "ZZ")
			return err == nil && phonenumbers.IsValidNumber(num)
		}
		digits := phonenumbers.NormalizeDigitsOnly(s)
		for _, region := range regions {
			region = strings.ToUpper(region)
			// Where numbers are written with a trunk prefix (0 in the UK and France), require
			// it: otherwise any 9 digits starting with 6 would be a French mobile. The US
			// prefix 1 is usually left out.
			if ndd := phonenumbers.GetNddPrefixForRegion(region, true); ndd != "" && ndd != "1" && !strings.HasPrefix(digits, ndd) {
				continue
			}
			num, err := phonenumbers.Parse(s, region)
			if err == nil && phonenumbers.IsValidNumberForRegion(num, region) {
				return true
			}
		}
		return false
	}
}

func supportedRegion(r string) bool {
	return phonenumbers.GetCountryCodeForRegion(strings.ToUpper(r)) != 0
}

// ipAddress accepts IPv4 and IPv6 addresses that can point at a person or a host: loopback and
// unspecified addresses (127.0.0.1, ::1, 0.0.0.0) stay, as they are in every config.
func ipAddress(s string) bool {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return false
	}
	if a.Is6() && strings.Count(s, ":") < 2 {
		return false
	}
	// ::/96 (IPv4-compatible, deprecated by RFC 4291) holds no host of today: "::ffff" is the
	// start of "::ffff:10.0.0.1" written in code, not an address.
	if b := a.As16(); a.Is6() && [12]byte(b[:12]) == [12]byte{} {
		return false
	}
	return !a.IsLoopback() && !a.IsUnspecified()
}
