// Command scripted-model runs the scripted model server (package llmtest) as its own
// process, for end-to-end tests:
//
//	go run ./backend/llm/llmtest/cmd/scripted-model --script FILE --addr 127.0.0.1:0
//
// It prints "scripted-model listening on http://HOST:PORT" once it accepts connections and
// serves until interrupted. GET /_scripted/requests returns the requests it has received.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scripted-model:", err)
		os.Exit(2)
	}
}

// run serves until ctx ends.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("scripted-model", flag.ContinueOnError)
	scriptPath := fs.String("script", "", "the script file (JSON; see package llmtest)")
	addr := fs.String("addr", "127.0.0.1:0", "the address to listen on (port 0 picks a free one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *scriptPath == "" {
		return errors.New("--script FILE is required: see backend/llm/llmtest/testdata/example.json")
	}
	script, err := llmtest.LoadScript(*scriptPath)
	if err != nil {
		return err
	}
	srv, err := llmtest.Listen(*addr, script)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "scripted-model listening on %s\n", srv.URL)
	<-ctx.Done()
	return nil
}
