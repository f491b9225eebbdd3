package browser

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// A page can stop and ask the person something the agent must not answer for them: a
// server's HTTP authentication, or whether to go on to a site whose certificate is not
// valid. Headless Chromium shows no dialog for either, so the tab keeps the question as its
// Prompt, publishes EventPrompt, and waits for AnswerPrompt.

// Prompt kinds.
const (
	PromptAuth        = "auth"        // the server wants a user name and password
	PromptCertificate = "certificate" // the site's certificate is not valid
)

// authWait is how long an HTTP authentication request waits for the person before it is
// cancelled (the page then shows the server's 401).
const authWait = 5 * time.Minute

// Prompt is a question a tab's page asks the person.
type Prompt struct {
	Kind string `json:"kind"`
	URL  string `json:"url"`
	// Realm and Scheme describe an auth challenge ("Basic", "Digest"…); Proxy says it is a
	// proxy asking.
	Realm  string `json:"realm,omitempty"`
	Scheme string `json:"scheme,omitempty"`
	Proxy  bool   `json:"proxy,omitempty"`
	// Error is the certificate problem, e.g. "net::ERR_CERT_AUTHORITY_INVALID".
	Error string `json:"error,omitempty"`

	requestID fetch.RequestID // the paused auth request
}

// String says what the page waits for, for the agent's page line.
func (p *Prompt) String() string {
	switch p.Kind {
	case PromptAuth:
		return fmt.Sprintf("the page waits for the user to sign in to %s (%s realm %q); the user was asked", p.URL, p.Scheme, p.Realm)
	case PromptCertificate:
		return fmt.Sprintf("the certificate of %s is not valid (%s); the user was asked whether to go on", p.URL, p.Error)
	}
	return ""
}

// PromptAnswer is the person's answer: Proceed with (for auth) the credentials, or not.
type PromptAnswer struct {
	Proceed  bool   `json:"proceed"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// titleBinding is the page function a document calls when its title changes: Chromium
// reports a title set by a script nowhere else.
const titleBinding = "__clusterspaceTitle"

// titleWatcher runs in every document of the tab before its own scripts.
const titleWatcher = `(() => {
  const send = globalThis[` + "`" + titleBinding + "`" + `];
  if (typeof send !== 'function') return;
  let last = null;
  const check = () => { if (document.title !== last) { last = document.title; send(last); } };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
})();`

// preparePage sets up what every page of a tab needs for prompts and titles: interception of
// document requests (so HTTP authentication reaches us) and the title watcher.
func preparePage(ctx context.Context) error {
	if err := fetch.Enable().WithHandleAuthRequests(true).
		WithPatterns([]*fetch.RequestPattern{{URLPattern: "*", ResourceType: network.ResourceTypeDocument}}).Do(ctx); err != nil {
		return err
	}
	if err := runtime.AddBinding(titleBinding).Do(ctx); err != nil {
		return err
	}
	_, err := page.AddScriptToEvaluateOnNewDocument(titleWatcher).Do(ctx)
	return err
}

// listenPrompts handles the interception events on chromedp's event loop: it must not block
// or call the browser itself, so the calls go on goroutines the conn's context bounds.
func (t *tab) listenPrompts(c *conn, ev any) bool {
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		// Document requests are paused only so that auth challenges reach us: let them go.
		go fetch.ContinueRequest(ev.RequestID).Do(cdp.WithExecutor(c.ctx, chromedp.FromContext(c.ctx).Target)) // Best effort: the page may be gone.
	case *fetch.EventAuthRequired:
		go t.askAuth(c, ev)
	case *runtime.EventBindingCalled:
		if ev.Name == titleBinding {
			select {
			case c.evc <- ev:
			default:
			}
		}
	case *network.EventLoadingFailed:
		if ev.Type == network.ResourceTypeDocument && strings.HasPrefix(ev.ErrorText, "net::ERR_CERT_") {
			select {
			case c.evc <- ev:
			default:
			}
		}
	default:
		return false
	}
	return true
}

// askAuth keeps an auth challenge as the tab's prompt until the person answers, the wait
// runs out, or the page goes away.
func (t *tab) askAuth(c *conn, ev *fetch.EventAuthRequired) {
	ch := ev.AuthChallenge
	p := &Prompt{Kind: PromptAuth, URL: ev.Request.URL, Realm: ch.Realm, Scheme: ch.Scheme,
		Proxy: ch.Source == fetch.AuthChallengeSourceProxy, requestID: ev.RequestID}
	t.setPrompt(p)
	t.m.record(t, "auth", fmt.Sprintf("%s asks to sign in (%s realm %q)", p.URL, p.Scheme, p.Realm), "")
	select {
	case <-time.After(authWait):
	case <-c.ctx.Done():
		return
	}
	if t.clearPrompt(p) {
		ctx, cancel := execCtx(c, opTimeout)
		defer cancel()
		fetch.ContinueWithAuth(p.requestID, &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}).Do(ctx) // Best effort: the request may be gone.
		t.m.record(t, "auth", "nobody answered within "+authWait.String()+": cancelled", "")
	}
}

// handlePrompt applies the events listenPrompts queued for the worker.
func (t *tab) handlePrompt(c *conn, ev any) {
	switch ev := ev.(type) {
	case *runtime.EventBindingCalled:
		t.setTitle(ev.Payload)
	case *network.EventLoadingFailed:
		// The error page's navigation follows and names the URL (see certificateFailed).
		t.update(func() { t.certErr = ev.ErrorText })
	}
}

// navigatedPrompt updates the prompt when the main frame navigates: a certificate error page
// becomes a question; any other page answers an old certificate question.
func (t *tab) navigatedPrompt(f *cdp.Frame) {
	t.mu.Lock()
	certErr := t.certErr
	t.certErr = ""
	old := t.prompt
	t.mu.Unlock()
	switch {
	case f.UnreachableURL != "" && certErr != "":
		t.setPrompt(&Prompt{Kind: PromptCertificate, URL: f.UnreachableURL, Error: certErr})
		t.m.record(t, "certificate", fmt.Sprintf("%s: %s", f.UnreachableURL, certErr), "")
	case old != nil && old.Kind == PromptCertificate:
		t.clearPrompt(old)
	}
}

func (t *tab) setPrompt(p *Prompt) {
	t.update(func() { t.prompt = p })
	t.notify()
	t.m.publish(EventPrompt, t, p.Kind)
}

// clearPrompt removes p if it is still the tab's prompt, and says whether it was.
func (t *tab) clearPrompt(p *Prompt) bool {
	t.mu.Lock()
	current := t.prompt == p
	if current {
		t.prompt = nil
	}
	t.mu.Unlock()
	if current {
		t.notify()
		t.m.publish(EventPrompt, t, "")
	}
	return current
}

// AnswerPrompt answers the question the pane's active tab asks: signs in with the given
// credentials (or cancels, and the page shows the server's refusal), or goes on to a site
// whose certificate is not valid — for this host, until the browser restarts, as a person
// clicking through Chromium's warning would — or stays on the warning.
func (m *Manager) AnswerPrompt(ctx context.Context, paneID string, a PromptAnswer) error {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return err
	}
	t.mu.Lock()
	p, c := t.prompt, t.conn
	t.mu.Unlock()
	if p == nil || c == nil {
		return &PageError{Msg: "the page is not asking anything now (answered already, or it went away)"}
	}
	if p.Kind == PromptAuth && a.Proceed && a.Username == "" {
		return &PageError{Msg: "give the user name to sign in with, or cancel"}
	}
	if !t.clearPrompt(p) {
		return &PageError{Msg: "the question was answered already"}
	}
	ectx, cancel := execCtx(c, opTimeout)
	defer cancel()
	switch p.Kind {
	case PromptAuth:
		resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
		what := "cancelled"
		if a.Proceed {
			resp = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials,
				Username: a.Username, Password: a.Password}
			what = "signed in as " + a.Username // never the password
		}
		m.record(t, "auth", what, "")
		return fetch.ContinueWithAuth(p.requestID, resp).Do(ectx)
	case PromptCertificate:
		if !a.Proceed {
			m.record(t, "certificate", "stayed on the warning", "")
			return nil
		}
		m.record(t, "certificate", "the user went on to "+p.URL, "")
		// The warning page's own controller, as its "Proceed" link uses: Chromium then
		// remembers the decision for the host like a person's click.
		return chromedp.Evaluate(`certificateErrorPageController.proceed()`, nil).Do(ectx)
	}
	return nil
}
