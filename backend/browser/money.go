package browser

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// The money gate: pages that look like checkout, payment, billing or banking are reported,
// so acting on them asks the user unless the goal may spend money. These are heuristics
// that err towards asking: a false alarm costs one question, a miss can cost money.

// paymentHosts are services whose pages are about moving money.
var paymentHosts = []string{"paypal.com", "checkout.stripe.com", "buy.stripe.com", "billing.stripe.com", "pay.google.com",
	"payments.google.com", "pay.amazon.com", "venmo.com", "cash.app", "checkout.shopify.com", "klarna.com", "afterpay.com",
	"wise.com", "revolut.com", "squareup.com", "checkout.com", "adyen.com", "braintreegateway.com"}

// moneyURLWords are path, query or host words of money pages.
var moneyURLWords = regexp.MustCompile(`(^|[^a-z])(check-?out|payments?|pay|pay-?now|billing|purchase|buy-?now|place-?order|donate|banking|netbank|ebanking|wallet|invoices?|subscription-?checkout|wire-?transfer)([^a-z]|$)`)

// bankHost matches a host name with "bank" in one of its labels (mybank.com, bankofx.com).
var bankHost = regexp.MustCompile(`(^|\.)[a-z0-9-]*bank[a-z0-9-]*\.`)

// Page text: a strong signal is an action or a field of a payment; a weak one is a price.
var (
	strongText = regexp.MustCompile(`\b(place (your )?order|complete (your )?(purchase|order)|confirm (your )?(purchase|payment|order)|submit payment|pay now|make a payment|buy now|proceed to checkout|checkout|card number|credit card|debit card|cvv|cvc|security code|expiry date|expiration date|billing address|payment (method|details)|iban|routing number|sort code|wire transfer|transfer funds|send money|account balance|order total)\b`)
	weakText   = regexp.MustCompile(`[$€£¥]\s?\d|\b\d+[.,]\d{2}\s?(usd|eur|gbp|chf|jpy)\b|\b(subtotal|total due|amount due|shipping|sales tax|vat)\b`)
)

// MoneyPage says why a page looks like it spends money (checkout, payment, billing,
// banking), or returns "" if it does not. pageText is the page's title and visible text,
// optionally followed by a "[payment fields: …]" line listing card or bank inputs.
func MoneyPage(rawURL, pageText string) string {
	if r := moneyURL(rawURL); r != "" {
		return r
	}
	return moneyText(pageText)
}

func moneyURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range paymentHosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return fmt.Sprintf("%s is a payment service", host)
		}
	}
	if bankHost.MatchString(host + ".") {
		return fmt.Sprintf("%s looks like a bank", host)
	}
	hostWords := strings.TrimSuffix(host, "."+lastLabels(host))
	for _, part := range []string{strings.ToLower(u.EscapedPath()), strings.ToLower(u.RawQuery), hostWords} {
		if m := moneyURLWords.FindStringSubmatch(part); m != nil {
			return fmt.Sprintf("the address mentions %q", m[2])
		}
	}
	return ""
}

// lastLabels is a host's registrable part, roughly: its last two labels.
func lastLabels(host string) string {
	parts := strings.Split(host, ".")
	if len(parts) <= 2 {
		return host
	}
	return strings.Join(parts[len(parts)-2:], ".")
}

func moneyText(text string) string {
	lower := strings.ToLower(text)
	if i := strings.Index(lower, "[payment fields:"); i >= 0 {
		return "the page has payment fields " + strings.TrimSuffix(strings.TrimSpace(text[i+len("[payment fields:"):]), "]")
	}
	strong := unique(strongText.FindAllString(lower, -1))
	weak := weakText.FindAllString(lower, -1)
	if len(strong) >= 2 || (len(strong) == 1 && len(weak) > 0) {
		why := "the page mentions " + quoteList(strong)
		if len(weak) > 0 {
			why += " and prices"
		}
		return why
	}
	return ""
}

func unique(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// HasCardNumber reports whether text holds 13-19 digits (spaces and dashes aside) that pass
// the Luhn check, as payment card numbers do.
func HasCardNumber(text string) bool {
	var digits []int
	flush := func() bool {
		ok := len(digits) >= 13 && len(digits) <= 19 && luhn(digits)
		digits = digits[:0]
		return ok
	}
	for _, r := range text + "x" {
		switch {
		case r >= '0' && r <= '9':
			digits = append(digits, int(r-'0'))
		case (r == ' ' || r == '-') && len(digits) > 0:
		default:
			if flush() {
				return true
			}
		}
	}
	return false
}

func luhn(d []int) bool {
	sum := 0
	for i := range d {
		v := d[len(d)-1-i]
		if i%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}
