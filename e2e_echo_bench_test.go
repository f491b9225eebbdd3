package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
)

// echoKeys is how many keys the echo benchmark types, one at a time, each after the last one's
// echo arrived.
const echoKeys = 200

// echoGap is the pause between one key's echo and the next key, as the desktop benchmark's
// xdotool types them (40 ms: 25 keys a second, a very fast typist). Without it each key lands
// while the page is still to draw the previous echo, and Chromium holds the new echo until
// that frame is drawn: the benchmark reports that case as well ("b2b", back to back).
const echoGap = 40 * time.Millisecond

// echoWarmup keys are typed before the counted ones, and their times logged apart: the first
// keys a page sees run its input and output code cold (9-27 ms each against 3-4 ms after).
const echoWarmup = 10

// echoProbe runs in the page: it notes when each key went down (the event's own timestamp,
// so the time the key waited in the renderer's queue counts) and when the terminal's buffer
// first held its echo (the cursor moved past it), and keeps the difference per key.
const echoProbe = `(() => {
  const paneId = %q;
  const view = window.__clusterspaceTerminalView(paneId);
  const st = { samples: [], pending: null, waiters: [] };
  document.addEventListener('keydown', (e) => {
    if (e.key.length === 1) st.pending = { at: e.timeStamp, target: view.cursorOffset() + 1 };
  }, true);
  view.onWriteParsed(() => {
    if (!st.pending || view.cursorOffset() < st.pending.target) return;
    st.samples.push(performance.now() - st.pending.at);
    st.pending = null;
    const ready = st.waiters.filter((w) => st.samples.length >= w.n);
    st.waiters = st.waiters.filter((w) => st.samples.length < w.n);
    for (const w of ready) w.resolve(st.samples.length);
  });
  window.__echoBench = st;
  window.__echoWait = (n) => st.samples.length >= n ? Promise.resolve(n)
    : new Promise((resolve) => st.waiters.push({ n, resolve }));
  return true;
})()`

func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// percentile of sorted values (nearest rank).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// echoRun types echoKeys keys into the first terminal pane of the served UI and returns, per
// key, the time from the key going down to its echo in xterm's buffer, and the time from the
// input frame leaving the page's WebSocket to the next output frame arriving on it (as the
// DevTools network events time them). Each key follows the last echo after gap.
func echoRun(t testing.TB, gap time.Duration) (buffer, socket, goClient []float64) {
	srv := startServe(t, t.TempDir(), e2ePassword)
	ctx := newBrowser(t)

	var mu sync.Mutex
	var sentAt float64
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventWebSocketFrameSent:
			if strings.Contains(e.Response.PayloadData, `"term.input"`) {
				mu.Lock()
				sentAt = float64(e.Timestamp.Time().UnixNano()) / 1e6
				mu.Unlock()
			}
		case *network.EventWebSocketFrameReceived:
			if strings.Contains(e.Response.PayloadData, `"type":"output"`) {
				mu.Lock()
				if sentAt != 0 {
					socket = append(socket, float64(e.Timestamp.Time().UnixNano())/1e6-sentAt)
					sentAt = 0
				}
				mu.Unlock()
			}
		}
	})
	logIn(t, ctx, srv.URL, e2ePassword)
	pane := readState(t, ctx).Panes[0].ID
	term := fmt.Sprintf(`[data-testid=terminal][data-pane-id=%q]`, pane)
	step(t, ctx, "wait for the shell's prompt",
		network.Enable(),
		chromedp.WaitVisible(term),
		waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.ready === 'true'`, term)),
		waitJS(fmt.Sprintf(`/[$#] *$/.test((%s).trimEnd() + ' ')`, terminalText(pane))),
		chromedp.Click(term),
		chromedp.Evaluate(fmt.Sprintf(echoProbe, pane), nil))
	for i := range echoWarmup + echoKeys {
		if i == echoWarmup {
			mu.Lock()
			socket = nil
			mu.Unlock()
		}
		key := string(rune('a' + i%26))
		var n int
		step(t, ctx, "type key "+key,
			chromedp.KeyEvent(key),
			chromedp.Evaluate(fmt.Sprintf(`window.__echoWait(%d)`, i+1), &n, awaitPromise))
		time.Sleep(gap)
	}
	step(t, ctx, "read the echo times", chromedp.Evaluate(`window.__echoBench.samples`, &buffer))
	t.Logf("the first %d keys (not counted): %.1f ms", echoWarmup, buffer[:echoWarmup])
	buffer = buffer[echoWarmup:]
	var tab string
	step(t, ctx, "read the tab id", chromedp.AttributeValue(term, "data-tab-id", &tab, nil))
	mu.Lock()
	defer mu.Unlock()
	return buffer, slices.Clone(socket), goClientEcho(t, srv.URL, pane, tab)
}

// goClientEcho types echoKeys keys into the pane's tab from a Go WebSocket client and returns
// each key's send → output received time: the server's and the socket's share of an echo.
func goClientEcho(t testing.TB, base, pane, tab string) []float64 {
	ctx := withTimeout(t, 60*time.Second)
	resp, err := http.Post(base+"/api/login", "application/json", strings.NewReader(fmt.Sprintf(`{"password":%q}`, e2ePassword)))
	if err != nil {
		t.Fatal(err)
	}
	var tokens struct {
		AccessToken string `json:"accessToken"`
	}
	json.NewDecoder(resp.Body).Decode(&tokens)
	resp.Body.Close()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/api/ws",
		&websocket.DialOptions{Subprotocols: []string{"clusterspace.v1", "bearer." + tokens.AccessToken}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	send := func(m map[string]string) {
		b, _ := json.Marshal(m)
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	next := func(typ string) {
		for {
			_, b, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(`"topic":"terminal"`)) && bytes.Contains(b, []byte(`"type":"`+typ+`"`)) {
				return
			}
		}
	}
	send(map[string]string{"type": "term.attach", "paneId": pane, "tabId": tab})
	next("replay")
	var out []float64
	for i := range echoKeys {
		start := time.Now()
		send(map[string]string{"type": "term.input", "paneId": pane, "tabId": tab, "data": string(rune('a' + i%26))})
		next("output")
		out = append(out, float64(time.Since(start).Microseconds())/1000)
		time.Sleep(5 * time.Millisecond) // like the browser run: each key after the last echo, not in a burst
	}
	return out
}

// BenchmarkServedKeystrokeEcho: key down → echo in xterm's buffer in the served UI (headless
// Chromium, real `serve`, a real bash), 200 keys typed one at a time, echoGap apart; and the
// WebSocket part of it (input frame sent → output frame received); and the same keys typed back
// to back (b2b), each as soon as the last echo is in the buffer.
func BenchmarkServedKeystrokeEcho(b *testing.B) {
	for range b.N {
		buffer, socket, goClient := echoRun(b, echoGap)
		b2b, _, _ := echoRun(b, 0)
		reportP50P99(b, "ms-echo", buffer)
		reportP50P99(b, "ms-ws", socket)
		reportP50P99(b, "ms-goclient", goClient)
		reportP50P99(b, "ms-b2b-echo", b2b)
	}
	b.ReportMetric(0, "ns/op")
}

// reportP50P99 sorts samples and reports their median and 99th percentile as name-p50 and
// name-p99.
func reportP50P99(b *testing.B, name string, samples []float64) {
	slices.Sort(samples)
	b.ReportMetric(percentile(samples, 50), name+"-p50")
	b.ReportMetric(percentile(samples, 99), name+"-p99")
}
