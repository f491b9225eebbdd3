package browser_test

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/browser"
)

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, err string }{
		{in: "example.com", want: "https://example.com"},
		{in: "  example.com/a?b=c  ", want: "https://example.com/a?b=c"},
		{in: "docs.example.com:8443/x", want: "https://docs.example.com:8443/x"},
		{in: "localhost:8080/app", want: "http://localhost:8080/app"},
		{in: "127.0.0.1:3000", want: "http://127.0.0.1:3000"},
		{in: "https://example.com/", want: "https://example.com/"},
		{in: "HTTP://Example.com", want: "HTTP://Example.com"},
		{in: "about:blank", want: "about:blank"},
		{in: "", err: "empty"},
		{in: "ftp://example.com", err: "scheme"},
		{in: "two words", err: "spaces"},
	}
	for _, tt := range tests {
		got, err := browser.NormalizeURL(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want one about %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestMoneyPage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url, text string
		money     bool
		why       string
	}{
		{url: "https://shop.example.com/checkout", money: true, why: `"checkout"`},
		{url: "https://shop.example.com/cart/check-out?step=2", money: true},
		{url: "https://example.com/account/billing", money: true, why: "billing"},
		{url: "https://example.com/pay?invoice=12", money: true},
		{url: "https://pay.example.com/", money: true},
		{url: "https://www.paypal.com/signin", money: true, why: "payment service"},
		{url: "https://checkout.stripe.com/c/pay/cs_test", money: true},
		{url: "https://online.mybank.com/accounts", money: true, why: "bank"},
		{url: "https://example.com/donate", money: true},
		{url: "https://example.com/settings/payment-methods", money: true},
		{url: "http://127.0.0.1:4000/checkout", money: true},
		{url: "https://example.com/blog/paying-attention", money: false},
		{url: "https://example.com/docs/payload", money: false},
		{url: "https://github.com/org/repo/pulls", money: false},
		{url: "https://example.com/", text: "Welcome! Read our docs.", money: false},
		{url: "https://example.com/", text: "Order total: $42.00\nPlace order", money: true, why: `"place order"`},
		{url: "https://example.com/", text: "Card number\nExpiry date\nCVC", money: true},
		{url: "https://example.com/", text: "Shop\n[payment fields: cc-number card]", money: true, why: "payment fields"},
		{url: "https://example.com/", text: "Transfer funds between your accounts. Account balance: £1,200.00", money: true},
		{url: "https://example.com/", text: "Our guide to credit card rewards", money: false}, // one signal, no price
		{url: "https://example.com/", text: "Prices from $9 a month", money: false},           // a price, no action
		{url: "file:///tmp/checkout.html", money: false},
	}
	for _, tt := range tests {
		why := browser.MoneyPage(tt.url, tt.text)
		if (why != "") != tt.money || (tt.why != "" && !strings.Contains(why, tt.why)) {
			t.Errorf("MoneyPage(%q, %q) = %q, want money=%v mentioning %q", tt.url, tt.text, why, tt.money, tt.why)
		}
	}
}

func TestHasCardNumber(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"4242 4242 4242 4242":          true,
		"card: 5555-5555-5555-4444 ok": true,
		"378282246310005":              true,
		"4242 4242 4242 4241":          false, // fails the Luhn check
		"call 555 0100":                false,
		"order 1234567890":             false,
		"":                             false,
	} {
		if got := browser.HasCardNumber(text); got != want {
			t.Errorf("HasCardNumber(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestFakesInput(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"document.querySelector('button').click()": true,
		"btn . click ()": true,
		"document.getElementById('q').value = 'x'":                       true,
		"input.checked=true":                                             true,
		"el.dispatchEvent(new MouseEvent('click'))":                      true,
		"el.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}))": true,
		"el.dispatchEvent(new Event('input'))":                           true,
		"const e = new PointerEvent('pointerdown')":                      true,
		"form.submit()": true,
		"document.execCommand('insertText', false, 'x')": true,
		"document.title": false,
		"Array.from(document.querySelectorAll('a')).map(a => a.href)": false,
		"input.value === 'x'":          false,
		"el.onclick":                   false,
		"getComputedStyle(el).display": false,
	}
	for code, want := range tests {
		if got := browser.FakesInput(code) != ""; got != want {
			t.Errorf("FakesInput(%q) = %v, want %v", code, got, want)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct{ reply, verdict, explanation string }{
		{"YES\nThe banner says Saved.", "YES", "The banner says Saved."},
		{"no.\nThe table is empty.\nextra", "NO", "The table is empty."},
		{"**UNCLEAR**\nA dialog covers it.", "UNCLEAR", "A dialog covers it."},
		{"Yes", "YES", "(the judge gave no reason)"},
		{"Yes, the banner shows", "UNCLEAR", "the judge did not answer YES, NO or UNCLEAR: Yes, the banner shows"},
		{"", "UNCLEAR", "the judge did not answer YES, NO or UNCLEAR: (an empty reply)"},
	}
	for _, tt := range tests {
		v := browser.ParseVerdict(tt.reply)
		if v.Verdict != tt.verdict || v.Explanation != tt.explanation {
			t.Errorf("ParseVerdict(%q) = %+v, want %s / %q", tt.reply, v, tt.verdict, tt.explanation)
		}
	}
}

func TestThumbnail(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 2048, 1000))
	for y := range 1000 {
		for x := range 2048 {
			c := color.RGBA{255, 0, 0, 255}
			if x >= 1024 {
				c = color.RGBA{0, 0, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	thumb, err := browser.Thumbnail(buf.Bytes(), 1024, 70)
	if err != nil {
		t.Fatal(err)
	}
	got, err := jpeg.Decode(bytes.NewReader(thumb))
	if err != nil {
		t.Fatal(err)
	}
	if b := got.Bounds(); b.Dx() != 1024 || b.Dy() != 500 {
		t.Fatalf("thumbnail is %v, want 1024x500", b)
	}
	if r, _, bl, _ := got.At(100, 250).RGBA(); r>>8 < 200 || bl>>8 > 60 {
		t.Errorf("the left half is not red: %v", got.At(100, 250))
	}
	if r, _, bl, _ := got.At(900, 250).RGBA(); bl>>8 < 200 || r>>8 > 60 {
		t.Errorf("the right half is not blue: %v", got.At(900, 250))
	}
	small, _ := browser.Thumbnail(thumb, 2000, 70)
	if cfg, _ := jpeg.DecodeConfig(bytes.NewReader(small)); cfg.Width != 1024 {
		t.Errorf("a picture narrower than the limit was resized to %d", cfg.Width)
	}
	if _, err := browser.Thumbnail([]byte("not a picture"), 1024, 70); err == nil {
		t.Error("garbage made a thumbnail")
	}
}

func TestFindChromium(t *testing.T) {
	t.Setenv("CLUSTERSPACE_CHROMIUM", "/no/such/chromium")
	if _, err := browser.FindChromium(); err == nil || !strings.Contains(err.Error(), "CLUSTERSPACE_CHROMIUM") {
		t.Fatalf("a bad override: %v", err)
	}
	self, _ := os.Executable()
	t.Setenv("CLUSTERSPACE_CHROMIUM", self)
	if p, err := browser.FindChromium(); err != nil || p != self {
		t.Fatalf("the override: %q, %v", p, err)
	}
	t.Setenv("CLUSTERSPACE_CHROMIUM", "")
	if p, err := browser.FindChromium(); err != nil || p == "" {
		t.Fatalf("no Chromium on this machine (scripts/setup.sh installs it): %v", err)
	}
}
