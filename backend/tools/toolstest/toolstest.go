// Package toolstest has small real tools for tests of what runs tools (the goal runner, the
// chat): they read real files, fail the way a real check fails, and wait until cancelled.
package toolstest

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// Basic returns read_file (under dir), http_post (network_write; it only says where it would
// post), run_check (always fails as a refused connection) and sleep (ms, until cancelled).
func Basic(dir string) []tools.Tool {
	return []tools.Tool{
		tools.New("read_file", "Read a file.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct {
			Path string `json:"path"`
		}) (tools.Result, error) {
			b, err := os.ReadFile(filepath.Join(dir, p.Path))
			if err != nil {
				return tools.Errorf("%v", err), nil
			}
			return tools.Result{Text: string(b)}, nil
		}),
		tools.New("http_post", "Post to a URL.", tools.NetworkWrite, func(ctx context.Context, c tools.Call, p struct {
			URL string `json:"url"`
		}) (tools.Result, error) {
			return tools.Result{Text: "posted to " + p.URL}, nil
		}),
		tools.New("run_check", "Run the health check.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct{}) (tools.Result, error) {
			return tools.Errorf("dial tcp 127.0.0.1:9: connection refused"), nil
		}),
		tools.New("sleep", "Wait.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct {
			MS int `json:"ms"`
		}) (tools.Result, error) {
			select {
			case <-time.After(time.Duration(p.MS) * time.Millisecond):
				return tools.Result{Text: "slept"}, nil
			case <-ctx.Done():
				return tools.Result{}, ctx.Err()
			}
		}),
	}
}
