package browser

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// Origin is the origin (scheme://host[:port]) of an http or https address, as a saved login is
// keyed by; "" for any other address (about:blank, file:, data:).
func Origin(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// Filled says which fields FillLogin filled, described as the model may read them.
type Filled struct {
	Username string `json:"username"` // the user name field, "" if the form has none
	Password string `json:"password"` // the password field
}

// fillLoginJS fills a login form without submitting it: the first visible, enabled password
// input, and the text, email or tel input before it (in its form, else in the page), each set
// through the input's own value setter with input and change events, as a person's typing
// would leave them, so the page's own scripts see the values. It refuses a page whose origin is
// no longer the one the login was saved for.
const fillLoginJS = `((want, user, pass) => {
  if (location.origin !== want) return {error: 'the page is now at ' + location.origin + ', not ' + want + ': nothing was filled'};
  const usable = (el) => {
    if (el.disabled || el.readOnly) return false;
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  const pw = Array.from(document.querySelectorAll('input[type=password]')).find(usable);
  if (!pw) return {error: 'the page has no password field to fill'};
  const textual = (el) => ['text', 'email', 'tel', ''].includes((el.getAttribute('type') || '').toLowerCase()) && usable(el);
  const before = (scope) => {
    const all = Array.from(scope.querySelectorAll('input'));
    for (let i = all.indexOf(pw) - 1; i >= 0; i--) if (textual(all[i])) return all[i];
    return null;
  };
  const name = (pw.form && before(pw.form)) || before(document);
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const fill = (el, v) => {
    el.focus();
    setter.call(el, v);
    el.dispatchEvent(new Event('input', {bubbles: true}));
    el.dispatchEvent(new Event('change', {bubbles: true}));
  };
  const label = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : el.name ? '[name=' + el.name + ']' : '');
  if (name && user) fill(name, user);
  fill(pw, pass);
  pw.blur();
  return {username: name && user ? label(name) : '', password: label(pw)};
})`

// FillLogin fills a saved login into the login form of the pane's active page, without
// submitting it, if the page is still at origin. The action log records the origin and the
// user name only; the password goes nowhere but the page's password field.
func (m *Manager) FillLogin(ctx context.Context, paneID, origin, username, password string) (Filled, error) {
	t, err := m.agentTab(paneID, "fill_login", origin+" as "+username)
	if err != nil {
		return Filled{}, err
	}
	var r struct {
		Filled
		Error string `json:"error"`
	}
	expr := fillLoginJS + "(" + jsArg(origin) + ", " + jsArg(username) + ", " + jsArg(password) + ")"
	if err := t.eval(ctx, expr, &r); err != nil {
		// Never the script's text in an error: it holds the password.
		return Filled{}, fmt.Errorf("the page did not take the login: %w", scrub(err, password))
	}
	if r.Error != "" {
		return Filled{}, pageErrorf("%s", r.Error)
	}
	return r.Filled, nil
}

// scrubbed is an error whose text had a secret cut out.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

func scrub(err error, secret string) error {
	if secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &scrubbed{strings.ReplaceAll(err.Error(), secret, "[password]"), err}
}
