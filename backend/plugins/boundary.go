package plugins

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"syscall"

	"github.com/clusterspace/clusterspace/backend/egress"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// A plugin runs in the app, outside any goal's network namespace, so its ctx.fetch for a
// confined goal is held to the goal's boundary here: the policy judges the address it names
// (tools.URLUser), and the connection itself is refused if it lands on this machine (a name
// that resolved elsewhere when judged and to 127.0.0.1 when dialled).

// URLs is the address the fetch names, for the policy's judgement of a confined caller.
func (t helperTool) URLs(args json.RawMessage) ([]string, error) {
	var a struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	return []string{a.URL}, nil
}

// confinedClient is client with every connection to this machine refused: the client a
// confined goal's ctx.fetch uses.
func confinedClient(client http.Client) http.Client {
	base, ok := client.Transport.(*http.Transport)
	if !ok || base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	d := &net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("%s is not an address", address)
		}
		var n int
		fmt.Sscan(port, &n)
		return egress.Rules{Ceiling: tools.SpendsMoney}.Check(http.MethodGet, host, n, []net.IP{ip})
	}}
	t.DialContext = d.DialContext
	t.Proxy = nil // the judged address is the one dialled
	client.Transport = t
	return client
}
