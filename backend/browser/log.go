package browser

import (
	"context"
	"fmt"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// actionLogSize is how many entries a pane's action log keeps: enough to retrace a task's
// recent steps, bounded so a long session does not grow it forever.
const actionLogSize = 200

// Action is one entry of a pane's action log: what the agent did, and what the page did.
type Action struct {
	Time   time.Time `json:"time"`
	TabID  string    `json:"tabId"`
	Action string    `json:"action"`
	Detail string    `json:"detail,omitempty"`
	URL    string    `json:"url,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// actionLog is a ring of the last actionLogSize actions.
type actionLog struct {
	entries []Action
	next    int
}

func (l *actionLog) add(a Action) {
	if len(l.entries) < actionLogSize {
		l.entries = append(l.entries, a)
		return
	}
	l.entries[l.next] = a
	l.next = (l.next + 1) % actionLogSize
}

func (l *actionLog) last(n int) []Action {
	all := append(append([]Action(nil), l.entries[l.next:]...), l.entries[:l.next]...)
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

func (m *Manager) record(t *tab, action, detail, errText string) {
	a := Action{Time: time.Now(), TabID: t.id, Action: action, Detail: clipText(detail, 300), URL: t.currentURL(), Error: errText}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.panes[t.paneID]; p != nil {
		p.log.add(a)
	}
}

// ActionLog returns the pane's last n actions, oldest first (all kept when n <= 0).
func (m *Manager) ActionLog(paneID string, n int) ([]Action, error) {
	m.mu.Lock()
	p := m.panes[paneID]
	var log []Action
	if p != nil {
		log = p.log.last(n)
	}
	m.mu.Unlock()
	if p == nil {
		return nil, m.noPane(paneID)
	}
	return log, nil
}

// doctorTimeout bounds each check of Doctor: a healthy page answers in milliseconds.
const doctorTimeout = 3 * time.Second

// Diagnosis is the health of a pane's active tab.
type Diagnosis struct {
	Tab        TabInfo       `json:"tab"`
	Alive      bool          `json:"alive"`      // the tab has a page that has not crashed
	CDP        bool          `json:"cdp"`        // the browser answers the DevTools protocol
	JS         bool          `json:"js"`         // a script runs in the page
	CDPLatency time.Duration `json:"cdpLatency"` // round trip of a browser command
	JSLatency  time.Duration `json:"jsLatency"`  // round trip of a trivial script
	Browser    string        `json:"browser"`    // product and version
	PID        int           `json:"pid"`        // of the browser process
	Viewers    int           `json:"viewers"`    // screencast viewers
	LaunchTook time.Duration `json:"launchTook"` // how long the browser took to start
	Problems   []string      `json:"problems"`   // what is wrong, with what to do
}

// Doctor checks the pane's active tab: is it alive, does the browser answer, does JS run.
func (m *Manager) Doctor(ctx context.Context, paneID string) (Diagnosis, error) {
	p, t, err := m.tab(paneID, "")
	if err != nil {
		return Diagnosis{}, err
	}
	d := Diagnosis{Tab: t.info()}
	m.mu.Lock()
	d.Viewers = len(p.watchers)
	m.mu.Unlock()
	c, err := t.live()
	if err != nil {
		d.Problems = append(d.Problems, err.Error())
		return d, nil
	}
	d.Alive = true
	d.LaunchTook = c.prof.launched
	if b := chromedp.FromContext(c.ctx).Browser; b != nil && b.Process() != nil {
		d.PID = b.Process().Pid
	}
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	start := time.Now()
	_, product, _, _, _, err := cdpbrowser.GetVersion().Do(cdp.WithExecutor(cctx, chromedp.FromContext(c.ctx).Browser))
	cancel()
	if err != nil {
		d.Problems = append(d.Problems, fmt.Sprintf("the browser does not answer the DevTools protocol (%v): reconnect the pane", err))
	} else {
		d.CDP, d.CDPLatency, d.Browser = true, time.Since(start), product
	}
	jctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	start = time.Now()
	var two float64
	err = t.run(jctx, chromedp.ActionFunc(func(ctx context.Context) error {
		res, exc, err := runtime.Evaluate("1 + 1").WithReturnByValue(true).Do(ctx)
		if err != nil {
			return err
		}
		if exc != nil {
			return fmt.Errorf("%s", exceptionText(exc))
		}
		return jsonNumber(res.Value, &two)
	}))
	if err != nil || two != 2 {
		d.Problems = append(d.Problems, fmt.Sprintf("scripts do not run in the page (%v): a dialog or a busy script may block it; reload or reconnect the pane", err))
	} else {
		d.JS, d.JSLatency = true, time.Since(start)
	}
	if d.Tab.Loading {
		d.Problems = append(d.Problems, "the page is still loading")
	}
	return d, nil
}
