package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/tools"
)

func TestRulesDecideByCeilingMethodAndDestination(t *testing.T) {
	t.Parallel()
	public := []net.IP{net.ParseIP("93.184.215.14")} // never dialled: only judged
	loop := []net.IP{net.ParseIP("127.0.0.1")}
	cases := []struct {
		name   string
		rules  Rules
		method string
		port   int
		ips    []net.IP
		refuse string // "" = allowed
	}{
		{"no network below network_get", Rules{Ceiling: tools.WriteLocal}, "GET", 80, public, "has no network"},
		{"a read at network_get", Rules{Ceiling: tools.NetworkGet}, "GET", 80, public, ""},
		{"a write at network_get", Rules{Ceiling: tools.NetworkGet}, "POST", 80, public, "is a write"},
		{"TLS to 443 at network_get", Rules{Ceiling: tools.NetworkGet}, "CONNECT", 443, public, ""},
		{"TLS to another port at network_get", Rules{Ceiling: tools.NetworkGet}, "CONNECT", 22, public, "ports 443 and 80 only"},
		{"any port at network_write", Rules{Ceiling: tools.NetworkWrite}, "CONNECT", 22, public, ""},
		{"loopback", Rules{Ceiling: tools.SpendsMoney}, "GET", 9222, loop, "outside a confined goal's reach"},
		{"any 127.x", Rules{Ceiling: tools.SpendsMoney}, "GET", 9222, []net.IP{net.ParseIP("127.8.9.10")}, "outside"},
		{"0.0.0.0 reaches local listeners", Rules{Ceiling: tools.SpendsMoney}, "GET", 80, []net.IP{net.IPv4zero}, "outside"},
		{"IPv6 loopback", Rules{Ceiling: tools.SpendsMoney}, "GET", 80, []net.IP{net.IPv6loopback}, "outside"},
		{"a name resolving to loopback among others", Rules{Ceiling: tools.SpendsMoney}, "GET", 80, append(public, loop...), "outside"},
		{"a local port the person opened", Rules{Ceiling: tools.NetworkGet, AllowLocal: []string{"localhost:3000"}}, "GET", 3000, loop, ""},
		{"another local port", Rules{Ceiling: tools.NetworkGet, AllowLocal: []string{"localhost:3000"}}, "GET", 3001, loop, "outside"},
		{"the app's own port, even if opened", Rules{Ceiling: tools.NetworkGet, AllowLocal: []string{"127.0.0.1:8080"}, Never: []string{"127.0.0.1:8080"}}, "GET", 8080, loop, "outside"},
		{"the app's own port on every address, even if opened", Rules{Ceiling: tools.NetworkGet, AllowLocal: []string{"localhost:8080"}, Never: []string{"0.0.0.0:8080"}}, "GET", 8080, loop, "outside"},
		{"the app's own port on every IPv6 address, even as an agent's provider", Rules{Ceiling: tools.SpendsMoney, AgentHosts: []string{"host:8080"}, Never: []string{"[::]:8080"}}, "POST", 8080, loop, "the app's own"},
		{"an agent pane's provider below network_get", Rules{Ceiling: tools.ReadOnly, AgentHosts: []string{"host:443"}}, "CONNECT", 443, public, ""},
		{"an agent pane's provider takes a POST at network_get", Rules{Ceiling: tools.NetworkGet, AgentHosts: []string{"host:8443"}}, "POST", 8443, public, ""},
		{"an agent pane's provider on this machine", Rules{Ceiling: tools.ReadOnly, AgentHosts: []string{"HOST:4000"}}, "POST", 4000, loop, ""},
		{"another port of the agent's host", Rules{Ceiling: tools.ReadOnly, AgentHosts: []string{"host:443"}}, "CONNECT", 444, public, "has no network"},
		{"the app's own port, even as an agent's provider", Rules{Ceiling: tools.SpendsMoney, AgentHosts: []string{"host:8080"}, Never: []string{"127.0.0.1:8080"}}, "POST", 8080, loop, "the app's own"},
	}
	for _, c := range cases {
		err := c.rules.Check(c.method, "host", c.port, c.ips)
		switch {
		case c.refuse == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.refuse != "" && (err == nil || !strings.Contains(err.Error(), c.refuse)):
			t.Errorf("%s: got %v, want a refusal with %q", c.name, err, c.refuse)
		}
	}
}

// client talks HTTP through the proxy's Unix socket, as the relay inside a sandbox does.
func client(p *Proxy) *http.Client {
	proxyURL, _ := url.Parse("http://proxy.invalid")
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(proxyURL),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", p.Path())
		},
	}}
}

func start(t *testing.T, rules Rules) *Proxy {
	t.Helper()
	p, err := Start(t.TempDir(), "goal-test", rules, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestProxyRefusesTheMachineItRunsOnAndCarriesWhatIsAllowed(t *testing.T) {
	t.Parallel()
	hits := make(chan string, 10)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- r.Method + " " + r.URL.Path
		fmt.Fprint(w, "site says hello")
	}))
	defer site.Close()
	port := site.Listener.Addr().(*net.TCPAddr).Port

	// Nothing opened: the local site is the app's kind of service and is refused.
	closed := start(t, Rules{Ceiling: tools.SpendsMoney})
	resp, err := client(closed).Get(site.URL + "/secret")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "outside a confined goal's reach") {
		t.Fatalf("a loopback site through the proxy: %d %q", resp.StatusCode, body)
	}

	// Opened by the person, at network_get: reads pass, writes do not.
	open := start(t, Rules{Ceiling: tools.NetworkGet, AllowLocal: []string{fmt.Sprintf("localhost:%d", port)}})
	resp, err = client(open).Get(site.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "site says hello" {
		t.Fatalf("an opened local site: %d %q", resp.StatusCode, body)
	}
	resp, err = client(open).Post(site.URL+"/form", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "POST is a write") {
		t.Fatalf("a POST at network_get: %d %q", resp.StatusCode, body)
	}
	close(hits)
	var got []string
	for h := range hits {
		got = append(got, h)
	}
	if fmt.Sprint(got) != "[GET /page]" {
		t.Fatalf("the site saw %v, want only the allowed read", got)
	}
}

func TestProxyTunnelsOnlyWhereAllowed(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }() // an echo server
		}
	}()
	addr := ln.Addr().String()
	tunnel := func(p *Proxy) (string, error) {
		c, err := net.Dial("unix", p.Path())
		if err != nil {
			return "", err
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
		if err != nil {
			return "", err
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			return "", errors.New(resp.Status + ": " + string(b))
		}
		fmt.Fprint(c, "ping\n")
		line, err := br.ReadString('\n')
		return line, err
	}
	if got, err := tunnel(start(t, Rules{Ceiling: tools.NetworkWrite})); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("a tunnel to loopback: %q, %v; want 403", got, err)
	}
	if got, err := tunnel(start(t, Rules{Ceiling: tools.NetworkWrite, AllowLocal: []string{addr}})); err != nil || got != "ping\n" {
		t.Fatalf("an opened tunnel: %q, %v", got, err)
	}
}
