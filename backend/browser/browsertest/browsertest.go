// Package browsertest serves the local pages the browser tests act on (a form, a dynamic
// list, a page that navigates, a file input, a page whose handlers check event.isTrusted, …)
// and starts a browser manager whose Chromium is shut down when the test ends.
package browsertest

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
)

// NewManager starts a browser manager on a fresh data dir. Its Chromium starts with the
// first tab and is shut down, and the data dir removed, when the test ends.
func NewManager(t testing.TB) (*browser.Manager, string) {
	t.Helper()
	return NewManagerWith(t, browser.Options{})
}

// NewManagerWith is NewManager with opts; its DataDir is replaced by the test's.
func NewManagerWith(t testing.TB, opts browser.Options) (*browser.Manager, string) {
	t.Helper()
	// Not t.TempDir: Chromium's helper processes can still be writing the profile for a
	// moment after the browser exits, and TempDir's cleanup fails the test when it cannot
	// remove a file. This dir is removed after the browser, with a short retry.
	dir, err := os.MkdirTemp("", "clusterspace-browser-test-")
	if err != nil {
		t.Fatal(err)
	}
	opts.DataDir = dir
	m := browser.NewManager(opts)
	t.Cleanup(func() {
		m.Shutdown()
		for range 30 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the browser data dir %s", dir)
	})
	return m, dir
}

// Site serves the test pages on 127.0.0.1.
type Site struct {
	*httptest.Server
}

// URL returns the address of a page of the site, such as "/form".
func (s *Site) Page(path string) string { return s.URL + path }

// NewSite starts the test site; it is closed when the test ends.
func NewSite(t testing.TB) *Site {
	t.Helper()
	mux := http.NewServeMux()
	for path, body := range pages {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	mux.HandleFunc("GET /submitted", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		for _, k := range []string{"name", "email", "color", "agree", "notes"} {
			fmt.Fprintf(&b, "<li id=%q>%s=%s</li>", "got-"+k, k, html.EscapeString(r.URL.Query().Get(k)))
		}
		fmt.Fprintf(w, "<!doctype html><title>Submitted</title><h1>Thanks</h1><ul>%s</ul>", b.String())
	})
	mux.HandleFunc("GET /set-cookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc123", Path: "/", MaxAge: 3600})
		fmt.Fprint(w, "<!doctype html><title>Cookie set</title><p>cookie set</p>")
	})
	mux.HandleFunc("GET /file.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Disposition", `attachment; filename="report.txt"`)
		fmt.Fprint(w, "downloaded content\n")
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		fmt.Fprint(w, "<!doctype html><title>Slow</title><p>slow page done</p>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &Site{srv}
}

const head = `<!doctype html><meta charset="utf-8"><style>body{font:16px sans-serif;margin:20px} button{padding:6px 12px}</style>`

var pages = map[string]string{
	"/": head + `<title>Home</title><h1>Home page</h1><p>Welcome to the test site.</p><a href="/form" id="to-form">Go to the form</a>`,

	"/form": head + `<title>Form</title><h1>Sign up</h1>
<form action="/submitted" method="get" id="signup">
  <label>Name <input id="name" name="name" placeholder="Your name"></label><br>
  <label>Email <input id="email" name="email" type="email"></label><br>
  <label>Colour <select id="color" name="color"><option value="">Pick one</option><option value="r">Red</option><option value="g">Green</option><option value="b">Blue</option></select></label><br>
  <label><input type="checkbox" id="agree" name="agree" value="yes"> I agree</label><br>
  <textarea id="notes" name="notes"></textarea><br>
  <button type="submit" id="submit">Send</button>
</form>`,

	"/list": head + `<title>List</title><h1>Shopping list</h1>
<button id="add" onclick="setTimeout(() => { const li = document.createElement('li'); li.className = 'item'; li.textContent = 'Item ' + (document.querySelectorAll('.item').length + 1); document.getElementById('items').append(li); }, 300)">Add item</button>
<button id="clear" onclick="document.getElementById('items').innerHTML = ''">Clear</button>
<ul id="items"><li class="item">Item 1</li><li class="item">Item 2</li></ul>`,

	"/nav": head + `<title>Navigator</title><h1>Navigation</h1>
<a id="link" href="/list">To the list</a>
<button id="later" onclick="setTimeout(() => location.href = '/slow', 200)">Go later</button>
<a id="blank" href="/" target="_blank">New tab</a>
<a id="download" href="/file.txt">Download report</a>`,

	"/login": head + `<title>Log in</title><h1>Log in</h1>
<label>User <input id="user" name="user"></label><br>
<label>Password <input id="pw" name="pw" type="password"></label><br>
<label>Code <input id="code" autocomplete="one-time-code"></label><br>
<input id="pin" name="pin" aria-label="Card PIN">
<button id="go">Log in</button>`,

	"/upload": head + `<title>Upload</title><h1>Upload</h1>
<input type="file" id="file" multiple onchange="document.getElementById('chosen').textContent = Array.from(this.files).map(f => f.name + ':' + f.size).join(',')">
<p id="chosen">nothing chosen</p>`,

	"/trusted": head + `<title>Trusted</title><h1>Trusted events</h1>
<button id="btn">Press me</button>
<input id="field">
<div id="hover" style="width:120px;height:40px;background:#ddd">Hover here</div>
<pre id="log"></pre>
<script>
const log = (s) => { document.getElementById('log').textContent += s + '\n'; };
document.getElementById('btn').addEventListener('click', (e) => log('click trusted=' + e.isTrusted));
document.getElementById('btn').addEventListener('dblclick', (e) => log('dblclick trusted=' + e.isTrusted));
document.getElementById('field').addEventListener('keydown', (e) => log('keydown ' + e.key + ' trusted=' + e.isTrusted));
document.getElementById('field').addEventListener('input', (e) => log('input trusted=' + e.isTrusted));
document.getElementById('hover').addEventListener('mouseenter', (e) => log('mouseenter trusted=' + e.isTrusted));
document.addEventListener('wheel', (e) => log('wheel trusted=' + e.isTrusted), { passive: true });
</script>`,

	"/aria": head + `<title>Locators</title><h1>Locators</h1>
<div role="button" tabindex="0" aria-label="Close dialog" onclick="document.getElementById('out').textContent = 'closed'" style="display:inline-block;padding:8px;background:#eee">×</div>
<button onclick="document.getElementById('out').textContent = 'saved'">Save draft</button>
<div role="tab" onclick="document.getElementById('out').textContent = 'tab settings'">Settings</div>
<span onclick="document.getElementById('out').textContent = 'plain'" style="cursor:pointer">Plain text target</span>
<p id="out">nothing yet</p>`,

	"/covered": head + `<title>Covered</title>
<button id="under" onclick="document.getElementById('out').textContent = 'under clicked'">Under</button>
<div id="cover" style="position:fixed;left:0;top:0;width:100%;height:200px;background:rgba(0,0,0,.5)">Cookie banner</div>
<p id="out" style="margin-top:220px">nothing yet</p>`,

	"/drag": head + `<title>Drag</title>
<div id="track" style="position:relative;width:400px;height:40px;background:#eee">
  <div id="knob" style="position:absolute;left:0;top:0;width:40px;height:40px;background:#36c"></div>
</div>
<p id="pos">0</p><div id="target" style="width:100px;height:60px;margin-left:300px;background:#9c9">Drop here</div>
<script>
const knob = document.getElementById('knob'), track = document.getElementById('track');
let drag = null;
knob.addEventListener('mousedown', (e) => { drag = { x: e.clientX, left: knob.offsetLeft }; });
document.addEventListener('mousemove', (e) => { if (!drag) return; const l = Math.max(0, Math.min(360, drag.left + e.clientX - drag.x)); knob.style.left = l + 'px'; document.getElementById('pos').textContent = String(Math.round(l)); });
document.addEventListener('mouseup', (e) => { if (drag) document.getElementById('pos').textContent += ' dropped trusted=' + e.isTrusted; drag = null; });
</script>`,

	"/long": head + `<title>Long</title><h1>Long page</h1>` + longBody(),

	"/checkout": head + `<title>Checkout</title><h1>Checkout</h1><p>Order total: $42.00</p>
<label>Card number <input autocomplete="cc-number" id="card"></label><button id="pay">Pay now</button>`,

	"/animated": head + `<title>Animated</title><canvas id="c" width="600" height="300"></canvas>
<script>
const c = document.getElementById('c').getContext('2d'); let f = 0;
function draw() { f++; c.fillStyle = 'hsl(' + (f * 3 % 360) + ',70%,60%)'; c.fillRect(0, 0, 600, 300); c.fillStyle = '#000'; c.fillRect((f * 4) % 560, 130, 40, 40); requestAnimationFrame(draw); }
requestAnimationFrame(draw);
</script>`,

	"/paint": `<!doctype html><title>Paint</title><body style="margin:0;height:100vh;background:#000" onmousedown="document.body.style.background = document.body.style.background === 'rgb(255, 255, 255)' ? 'rgb(0, 0, 0)' : 'rgb(255, 255, 255)'"></body>`,

	"/popup": head + `<title>Popup</title><button id="open" onclick="window.open('/list')">Open list</button>`,

	"/dialog": head + `<title>Dialog</title><button id="ask" onclick="document.getElementById('out').textContent = confirm('Really?') ? 'yes' : 'no'">Ask</button><p id="out">-</p>`,
}

func longBody() string {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "<p id=\"p%d\">Paragraph %d of the long page, with enough words to wrap a little.</p>\n", i, i)
	}
	b.WriteString(`<p id="end">The end of the long page.</p>`)
	return b.String()
}
