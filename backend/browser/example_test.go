package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/clusterspace/clusterspace/backend/browser"
)

// A pane opens a page, the agent types and clicks with real input events, and reads the result.
func ExampleManager() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Greeter</title><input id="who" aria-label="Your name">
<button onclick="document.getElementById('out').textContent = 'Hello, ' + who.value">Greet</button><p id="out"></p>`)
	}))
	defer site.Close()
	dir, _ := os.MkdirTemp("", "clusterspace-example-")
	defer os.RemoveAll(dir)
	m := browser.NewManager(browser.Options{DataDir: dir})
	defer m.Shutdown()

	ctx := context.Background()
	tab, err := m.Open(ctx, "pane-1", "workspace-1", site.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("opened:", tab.Title)
	m.Type(ctx, "pane-1", browser.TypeOptions{Locator: browser.Locator{AriaLabel: "Your name"}, Text: "Ada"})
	hit, _ := m.Click(ctx, "pane-1", browser.Locator{Role: "button", Text: "Greet"})
	fmt.Println("clicked:", hit.Element.Name, "found by", hit.Strategy)
	els, _, _ := m.Query(ctx, "pane-1", "#out", 1)
	fmt.Println("page says:", els[0].Text)
	// Output:
	// opened: Greeter
	// clicked: Greet found by role+text
	// page says: Hello, Ada
}
