package mcpserve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// localEndpoint is the URL requests on the data dir's socket are sent to: the socket is the
// address, the host a name for the Host header.
const localEndpoint = "http://clusterspace.local/mcp"

// Attach serves MCP on in and out (the stdio of `clusterspace mcp`) by passing every call to
// the server on the data dir's socket, which its owner runs: the calls are decided there, by
// the owner's policy, and wait for approval in its window. token ("" none) is the client's,
// from `clusterspace mcp token create`; without one the owner treats the caller as the local
// person at a read-only ceiling.
func Attach(ctx context.Context, dataDir, token, version string, in io.ReadCloser, out io.WriteCloser) error {
	sock := filepath.Join(dataDir, SocketFile)
	if _, err := os.Stat(sock); err != nil {
		return fmt.Errorf("the process that owns the data dir serves no MCP socket (%s): only the desktop window and serve do; "+
			"run clusterspace mcp again once it has ended, or start serve", sock)
	}
	var dialer net.Dialer
	base := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, "unix", sock)
	}}
	defer base.CloseIdleConnections()
	var rt http.RoundTripper = base
	if token != "" {
		rt = bearer{token, base}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "clusterspace-mcp-attach", Version: version}, nil)
	sess, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: localEndpoint, HTTPClient: &http.Client{Transport: rt},
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		return fmt.Errorf("attach to the app that owns the data dir through %s: %w", sock, err)
	}
	defer sess.Close()
	srv := sdk.NewServer(&sdk.Implementation{Name: ServerName, Title: "ClusterSpace", Version: version}, nil)
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list the owner's MCP tools: %w", err)
		}
		srv.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return sess.CallTool(ctx, &sdk.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
		})
	}
	return srv.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
}

// bearer adds the client's token to every request (a copy: a RoundTripper must not change
// the request it is given).
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
