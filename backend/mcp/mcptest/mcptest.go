// Package mcptest runs a small MCP server over stdio for tests: the test binary itself,
// started again with ServerArgs, so no other program need be installed. A test package's
// TestMain calls ServeIfAsked first.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/procstat"
)

const arg0 = "mcptest-server"

// Modes of the server.
const (
	Serve   = "serve"   // answers: echo, add, picture, crash, hang
	Env     = "env"     // answers as Serve, and env: the server's environment (its tokens too) as JSON
	Garbage = "garbage" // writes lines that are not JSON-RPC and never answers
	Leak    = "leak"    // writes $MCPTEST_TOKEN to stderr and exits 1 (a secret in an error)
	Silent  = "silent"  // starts and never says a word
	// Banner answers as Serve, but first prints lines that are not JSON-RPC on its stdout (a
	// banner, a log line, a JSON log line) as libraries do, and more before each answer of
	// noisy.
	Banner = "banner"
)

// ServerArgs is the command and args of mcp.json for a server in mode, marked so that
// Processes finds it.
func ServerArgs(mode, marker string) (string, []string) {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exe, []string{arg0, mode, marker}
}

// ServeIfAsked runs the server and exits when the process was started as one.
func ServeIfAsked() {
	if len(os.Args) < 3 || os.Args[1] != arg0 {
		return
	}
	switch os.Args[2] {
	case Garbage:
		for i := 0; ; i++ {
			fmt.Printf("this is not JSON-RPC %d\n", i)
			time.Sleep(100 * time.Millisecond)
		}
	case Leak:
		fmt.Fprintf(os.Stderr, "auth failed for token %s\n", os.Getenv("MCPTEST_TOKEN"))
		os.Exit(1)
	case Silent:
		select {}
	case Env:
		s := NewServer()
		addEnv(s)
		os.Exit(serve(s))
	case Banner:
		noise()
		s := NewServer()
		mcp.AddTool(s, &mcp.Tool{Name: "noisy", Description: "Print lines that are not JSON-RPC on stdout, then echo."}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			noise()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noisy: " + a.Text}}}, nil, nil
		})
		os.Exit(serve(s))
	}
	os.Exit(serve(NewServer()))
}

// noise prints what servers print on stdout by mistake. Each is one write, so it cannot land
// inside a message the SDK writes.
func noise() {
	fmt.Print("mcptest server v1 -- ready\n")
	fmt.Print("[INFO] listening on stdio\n")
	fmt.Print(`{"level":"info","msg":"a log line in JSON, not JSON-RPC"}` + "\n")
	fmt.Print("\n")
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"what to echo"`
}
type envArgs struct {
	Prefix string `json:"prefix,omitempty" jsonschema:"only variables whose names start with it"`
}
type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}
type none struct{}

func serve(s *mcp.Server) int {
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// NewServer is the test server's tools, for a test that serves them itself (over HTTP).
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two integers."}, func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(a.A + a.B)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "picture", Description: "Draw a small red square."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		img := image.NewRGBA(image.Rect(0, 0, 8, 8))
		for i := range img.Pix {
			img.Pix[i] = []byte{255, 0, 0, 255}[i%4]
		}
		var buf bytes.Buffer
		png.Encode(&buf, img)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a red square"}, &mcp.ImageContent{MIMEType: "image/png", Data: buf.Bytes()}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit the server at once."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "crashing on purpose")
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answer."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	return s
}

// addEnv adds env: a tool that hands the server's environment (and so the tokens mcp.json
// gives it) to whoever calls it, as JSON, which is what masking must catch.
func addEnv(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "List the server's environment variables as JSON."}, func(_ context.Context, _ *mcp.CallToolRequest, a envArgs) (*mcp.CallToolResult, any, error) {
		vars := map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, a.Prefix) {
				vars[k] = v
			}
		}
		b, err := json.Marshal(vars)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
	})
}

// Processes lists the pids of live processes whose command line holds marker.
func Processes(marker string) []int {
	var pids []int
	for _, p := range procstat.All() {
		// A zombie is gone for every purpose but its exit status.
		if !p.Zombie() && strings.Contains(p.Cmdline(), marker) {
			pids = append(pids, p.PID)
		}
	}
	return pids
}
