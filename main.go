// Command clusterspace is a desktop workspace of terminal and browser panes with an AI agent.
// One engine has three doors: the desktop window (default), a headless HTTP + WebSocket server
// (`serve`), and the CLI.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/clusterspace/clusterspace/backend/api"
	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/keyenv"
	"github.com/clusterspace/clusterspace/backend/mcpserve"
	"github.com/clusterspace/clusterspace/backend/server"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

//go:embed all:frontend/dist
var embedded embed.FS

// usage is `clusterspace --help`; its text lives with the other commands' help in backend/cli.
const usage = cli.Usage

func main() {
	// Before anything else: move the API key variables out of this process's environment, so
	// no goal can read them from /proc (see backend/keyenv).
	if err := keyenv.Seal(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "clusterspace:", err)
		os.Exit(70)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "":
		if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
			printVersion(stdout)
			return cli.ExitOK
		}
		if len(args) == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "-help") {
			fmt.Fprint(stdout, usage)
			return cli.ExitOK
		}
		return desktopCommand(args, stdout, stderr)
	case "serve":
		return serveCommand(args, stdout, stderr)
	case "goal":
		return cli.Goal(args, stdout, stderr)
	case "fleet":
		return cli.Fleet(args, stdout, stderr)
	case "diff":
		return cli.Diff(args, stdout, stderr)
	case "land":
		return cli.Land(args, stdout, stderr)
	case "mcp":
		return cli.Mcp(args, version, stdout, stderr)
	case "version":
		printVersion(stdout)
		return cli.ExitOK
	case "sandbox-exec":
		return terminal.SandboxExecMain(args)
	case "help":
		fmt.Fprint(stdout, usage)
		return cli.ExitOK
	default:
		fmt.Fprintf(stderr, "clusterspace: unknown command %q\n\n%s", cmd, usage)
		return cli.ExitUsage
	}
}

func printVersion(w io.Writer) {
	doors := "desktop, serve, CLI"
	if !desktopBuilt {
		doors = "serve, CLI; built without the desktop window"
	}
	fmt.Fprintf(w, "clusterspace %s (%s)\n", version, doors)
}

// parseFlags parses args with fs. It returns false with the exit status after printing help
// for -h/--help (status 0) or the usage for a bad flag or a stray argument (64).
func parseFlags(fs *flag.FlagSet, args []string, help string, stdout, stderr io.Writer) (int, bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, help)
			return cli.ExitOK, false
		}
		fmt.Fprintf(stderr, "clusterspace: %v\n\n%s", err, usage)
		return cli.ExitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "clusterspace: unexpected argument %q\n\n%s", fs.Arg(0), usage)
		return cli.ExitUsage, false
	}
	return cli.ExitOK, true
}

func frontendFS() (fs.FS, error) { return fs.Sub(embedded, "frontend/dist") }

func desktopCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clusterspace", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "")
	configDir := fs.String("config-dir", "", "")
	if code, ok := parseFlags(fs, args, usage, stdout, stderr); !ok {
		return code
	}
	if !desktopBuilt {
		fmt.Fprintf(stderr, "clusterspace: %v\n", runDesktop(nil, nil))
		return cli.ExitError
	}
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		fmt.Fprintln(stderr, "clusterspace: no display (DISPLAY and WAYLAND_DISPLAY are unset): run `clusterspace serve` and open the printed URL in a browser")
		return cli.ExitError
	}
	markGo("main")
	eng, err := engine.Open(context.Background(), *dataDir, engine.WithCommand("desktop"), engine.WithConfigDir(*configDir))
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace: %v\n", err)
		return cli.ExitFor(err)
	}
	defer eng.Close()
	markGo("engine-open")
	// `clusterspace mcp` run beside the window attaches through the data dir's socket.
	if local, err := mcpserve.ListenLocal(eng.DataDir, mcpService(eng, slog.Default()).Handler(mcpserve.NewTokens(eng.DataDir), version, true)); err != nil {
		slog.Warn("clusterspace mcp cannot attach to this window", "err", err) // the window works without it
	} else {
		defer local.Close()
		eng.OfferMCP()
	}
	front, err := frontendFS()
	if err == nil {
		err = runDesktop(eng, front)
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace: %v\n", err)
		return cli.ExitError
	}
	return cli.ExitOK
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func serveCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", server.DefaultAddr, "")
	dataDir := fs.String("data-dir", "", "")
	configDir := fs.String("config-dir", "", "")
	passwordFile := fs.String("password-file", "", "")
	allowRemote := fs.Bool("allow-remote", false, "")
	var origins stringList
	fs.Var(&origins, "allowed-origin", "")
	if code, ok := parseFlags(fs, args, cli.ServeHelp, stdout, stderr); !ok {
		return code
	}
	remote, err := server.CheckAddr(*addr, *allowRemote)
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace serve: %v\n", err)
		return cli.ExitUsage
	}
	if err := serve(serveOptions{addr: *addr, dataDir: *dataDir, configDir: *configDir, passwordFile: *passwordFile,
		allowRemote: *allowRemote, remote: remote, origins: origins}, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "clusterspace serve: %v\n", err)
		return cli.ExitFor(err)
	}
	return cli.ExitOK
}

type serveOptions struct {
	addr, dataDir, configDir, passwordFile string
	allowRemote, remote                    bool
	origins                                []string
}

func serve(o serveOptions, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Listening comes first: the engine must know the real address (--addr with port 0
	// gets one only now) before any goal's proxy is made.
	ln, err := server.Listen(o.addr, o.allowRemote)
	if err != nil {
		return err
	}
	defer ln.Close() // Best effort: Serve closes it; this covers a return before serving.
	eng, err := engine.Open(ctx, o.dataDir, engine.WithCommand("serve"), engine.WithConfigDir(o.configDir),
		// No confined goal reads the password file or reaches this server.
		engine.WithSecretFiles(o.passwordFile), engine.WithOwnAddrs(ln.Addr().String()))
	if err != nil {
		return err
	}
	defer eng.Close()
	auth, generated, err := server.SetupAuth(ctx, eng.DataDir, eng.Store, o.passwordFile)
	if err != nil {
		return err
	}
	front, err := frontendFS()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	mcpSvc, tokens := mcpService(eng, logger), mcpserve.NewTokens(eng.DataDir)
	srv, err := server.New(server.Config{Addr: o.addr, AllowRemote: o.allowRemote, AllowedOrigins: o.origins,
		Frontend: front, Version: version, Logger: logger}, server.Deps{Auth: auth, Services: api.ForEngine(eng, version), Events: eng.Sources(),
		MCPServer: mcpSvc.Handler(tokens, version, false)})
	if err != nil {
		return err
	}
	// `clusterspace mcp` run beside this process attaches through the data dir's socket.
	if local, err := mcpserve.ListenLocal(eng.DataDir, mcpSvc.Handler(tokens, version, true)); err != nil {
		logger.Warn("clusterspace mcp cannot attach to this server", "err", err) // /mcp works without it
	} else {
		defer local.Close()
		eng.OfferMCP()
	}
	if o.remote {
		fmt.Fprintf(stderr, "WARNING: listening on %s, reachable from other machines. Traffic is plain HTTP: put it behind TLS (a reverse proxy or an SSH tunnel).\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "ClusterSpace %s serving on http://%s\n", version, ln.Addr())
	fmt.Fprintf(stdout, "Data dir: %s\n", eng.DataDir)
	switch {
	case generated != "":
		fmt.Fprintf(stdout, "First start: the login password is  %s\n", generated)
		fmt.Fprintln(stdout, "It is shown only this once and stored only as a hash; set your own with --password-file FILE.")
	case o.passwordFile != "":
		fmt.Fprintln(stdout, "Log in with the password from --password-file.")
	default:
		fmt.Fprintln(stdout, "Log in with the password set earlier (replace it with --password-file FILE).")
	}
	err = srv.Serve(ctx, ln)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// mcpService is ClusterSpace as an MCP server over eng (backend/mcpserve), for serve's /mcp
// and the data dir's socket.
func mcpService(eng *engine.Engine, logger *slog.Logger) *mcpserve.Service {
	return mcpserve.New(mcpserve.Deps{Registry: eng.Registry, Approvals: eng.Approvals, Workspaces: eng.Workspaces,
		Goals: eng.Goals, Logger: logger})
}
