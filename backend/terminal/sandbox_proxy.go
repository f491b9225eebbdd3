package terminal

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// A confined command with network allowed lives in a network namespace of its own, whose only
// way out is the app's egress proxy: a Unix socket outside the sandbox (Sandbox.Proxy). Inside,
// socat (from apt, as Claude Code's sandbox uses it) listens on the namespace's own loopback at
// ProxyPort and relays each connection to that socket; the shell's HTTP(S)_PROXY variables
// point at it. socat starts before Landlock and the socket filter apply, so it alone may
// connect to a Unix socket; the shell can neither signal nor trace it (Landlock's scoping).

// ProxyPort is where a confined command finds the egress proxy, on its own loopback.
const ProxyPort = 3128

// proxyReady bounds the wait for socat to listen before the shell starts: a command typed at
// once must already find the proxy.
const proxyReady = 3 * time.Second

// ProxyEnv points the usual proxy variables of a confined shell at the relay.
func ProxyEnv() []string {
	u := "http://127.0.0.1:" + strconv.Itoa(ProxyPort)
	env := []string{"NO_PROXY=", "no_proxy="}
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, name+"="+u)
	}
	return env
}

// startRelay starts socat relaying ProxyPort on this namespace's loopback to the proxy's Unix
// socket, and waits until it listens. It is left running: it ends with the namespace.
func startRelay(socket string) error {
	socat, err := exec.LookPath("socat")
	if err != nil {
		return fmt.Errorf("cannot relay the network to the egress proxy: socat is not installed (run `make setup`, or `apt-get install socat`)")
	}
	if st, err := os.Stat(socket); err != nil || st.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("egress proxy socket %q is not there: the app's proxy for this goal has stopped", socket)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ProxyPort)
	cmd := exec.Command(socat, "-lf", "/dev/null",
		"TCP-LISTEN:"+strconv.Itoa(ProxyPort)+",bind=127.0.0.1,reuseaddr,fork",
		"UNIX-CONNECT:"+socket)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start socat: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(proxyReady)
	for {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("socat stopped before it listened on %s: %v", addr, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("socat did not listen on %s within %s", addr, proxyReady)
		}
	}
}
