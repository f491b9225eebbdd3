package browser_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
)

// HTTP authentication asks the person (headless Chromium has no dialog): the answer signs
// in, or cancels and the page shows the server's refusal. The password is never logged.
func TestHTTPAuthAsksThePerson(t *testing.T) {
	m, _ := browsertest.NewManager(t)
	ctx := testCtx(t)
	// Chromium keeps credentials per origin and realm, so each case gets its own server.
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ada" || p != "s3cret-pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="lab"`)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, "<title>Refused</title>go away")
			return
		}
		fmt.Fprint(w, "<title>Inside</title>welcome")
	})
	if _, err := m.Open(ctx, "p1", "ws", ""); err != nil {
		t.Fatal(err)
	}
	events := m.Events().Subscribe(ctx)
	if err := m.AnswerPrompt(ctx, "p1", browser.PromptAnswer{Proceed: true}); err == nil {
		t.Fatal("answering when nothing is asked must fail")
	}

	for _, tc := range []struct {
		answer browser.PromptAnswer
		title  string
	}{
		{browser.PromptAnswer{Proceed: true, Username: "ada", Password: "s3cret-pw"}, "Inside"},
		{browser.PromptAnswer{Proceed: false}, "Refused"},
	} {
		srv := httptest.NewServer(handler)
		defer srv.Close()
		done := make(chan browser.PageInfo, 1)
		go func() {
			info, _ := m.Navigate(ctx, "p1", srv.URL+"/private")
			done <- info
		}()
		ev := waitEvent(t, events, browser.EventPrompt, func(e browser.Event) bool { return e.Tab.Prompt != nil })
		p := ev.Tab.Prompt
		if p.Kind != browser.PromptAuth || p.Realm != "lab" || !strings.EqualFold(p.Scheme, "basic") || !strings.Contains(p.URL, "/private") {
			t.Fatalf("prompt %+v", p)
		}
		if info, _ := m.Page("p1"); info.Prompt == nil || !strings.Contains(info.String(), "sign in") {
			t.Fatalf("the agent's page line does not say the page waits: %s", info)
		}
		if tc.answer.Proceed {
			if err := m.AnswerPrompt(ctx, "p1", browser.PromptAnswer{Proceed: true}); err == nil || !strings.Contains(err.Error(), "user name") {
				t.Fatalf("signing in without a user name: %v", err)
			}
		}
		if err := m.AnswerPrompt(ctx, "p1", tc.answer); err != nil {
			t.Fatal(err)
		}
		if info := <-done; info.Title != tc.title || info.Prompt != nil {
			t.Fatalf("after answering %+v: %s", tc.answer, info)
		}
	}
	log, _ := m.ActionLog("p1", 50)
	var all strings.Builder
	for _, a := range log {
		fmt.Fprintf(&all, "%+v\n", a)
	}
	if !strings.Contains(all.String(), "signed in as ada") || strings.Contains(all.String(), "s3cret-pw") {
		t.Fatalf("action log:\n%s", all.String())
	}
}

// A site whose certificate is not valid shows Chromium's warning and asks; going on loads it
// and Chromium remembers the decision for the host, as after a person's click.
func TestCertificateErrorAsksThePerson(t *testing.T) {
	m, _ := browsertest.NewManager(t)
	ctx := testCtx(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<title>Self-signed</title>hello over TLS")
	}))
	srv.TLS = &tls.Config{}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // Chromium's refused handshakes are the point
	srv.StartTLS()
	defer srv.Close()
	if _, err := m.Open(ctx, "p1", "ws", ""); err != nil {
		t.Fatal(err)
	}
	events := m.Events().Subscribe(ctx)
	if _, err := m.Navigate(ctx, "p1", srv.URL); err == nil || !strings.Contains(err.Error(), "ERR_CERT_") {
		t.Fatalf("navigating to a self-signed site: %v", err)
	}
	ev := waitEvent(t, events, browser.EventPrompt, func(e browser.Event) bool { return e.Tab.Prompt != nil })
	if p := ev.Tab.Prompt; p.Kind != browser.PromptCertificate || !strings.HasPrefix(p.Error, "net::ERR_CERT_") || !strings.HasPrefix(p.URL, srv.URL) {
		t.Fatalf("prompt %+v", p)
	}
	if err := m.AnswerPrompt(ctx, "p1", browser.PromptAnswer{Proceed: true}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, browser.EventTitle, func(e browser.Event) bool { return e.Tab.Title == "Self-signed" })
	if info, _ := m.Page("p1"); info.Prompt != nil {
		t.Fatalf("the question outlived the answer: %+v", info.Prompt)
	}
	// The decision holds for the host in other tabs of the browser too.
	if _, err := m.Open(ctx, "p2", "ws", ""); err != nil {
		t.Fatal(err)
	}
	if info, err := m.Navigate(ctx, "p2", srv.URL+"/again"); err != nil || info.Title != "Self-signed" {
		t.Fatalf("the host again: %s %v", info, err)
	}
}

// A title a page's script sets is reported like a loaded one.
func TestScriptSetTitleIsReported(t *testing.T) {
	m, _ := browsertest.NewManager(t)
	ctx := testCtx(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Before</title><button id=b onclick="document.title = 'After ' + 1">go</button>`)
	}))
	defer srv.Close()
	if _, err := m.Open(ctx, "p1", "ws", srv.URL); err != nil {
		t.Fatal(err)
	}
	events := m.Events().Subscribe(ctx)
	if _, err := m.Click(ctx, "p1", browser.Locator{Selector: "#b"}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, browser.EventTitle, func(e browser.Event) bool { return e.Tab.Title == "After 1" })
	if tabs := m.Tabs("p1"); tabs[0].Title != "After 1" {
		t.Fatalf("tabs say %q", tabs[0].Title)
	}
}
