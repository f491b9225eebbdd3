package terminaltest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clusterspace/clusterspace/backend/procstat"
)

// sshdPath is OpenSSH's server (apt openssh-server, installed by scripts/setup.sh). sshd
// refuses to start unless run by its absolute path.
const sshdPath = "/usr/sbin/sshd"

// sshdStartTimeout bounds the wait for sshd's "Server listening" lines; it takes ~50 ms.
const sshdStartTimeout = 10 * time.Second

// SSHD is a real OpenSSH server on two loopback ports, run by a test binary as its child,
// with a throwaway host key, a throwaway user and that user's key. Port takes keys only;
// PasswordPort takes the user's password too. The user's shell is bash and tmux is installed
// (setup installs it), so SSH panes attach to real tmux sessions.
type SSHD struct {
	Host         string // 127.0.0.1
	Port         int    // public key authentication only
	PasswordPort int    // public key or password
	User         string
	Password     string
	KeyPath      string // a private key the server accepts
	WrongKeyPath string // a private key the server does not know
	HostKeyLine  string // the server's public host key ("ssh-ed25519 AAAA…")

	dir string
	cmd *exec.Cmd
	mu  sync.Mutex
	log strings.Builder // everything sshd logged
}

// Log is what sshd has logged so far (logins accepted and refused, one line each).
func (s *SSHD) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// StartSSHD starts sshd for a test binary. name tells test packages apart: each gets its own
// user (clusterspace-<name>), so packages that run at once do not share tmux servers. It needs
// root (sshd changes to the user at login; the test user is added and removed): CI and the
// development machines run tests as root.
func StartSSHD(name string) (*SSHD, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the SSH tests start sshd and add a test user: run them as root")
	}
	if _, err := os.Stat(sshdPath); err != nil {
		return nil, fmt.Errorf("%s is missing: run scripts/setup.sh (it installs openssh-server)", sshdPath)
	}
	dir, err := os.MkdirTemp("", "clusterspace-sshd-")
	if err != nil {
		return nil, err
	}
	// sshd reads authorized_keys as the logged-in user: the directory must be open to it.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	s := &SSHD{Host: "127.0.0.1", User: "clusterspace-" + name, dir: dir,
		KeyPath: filepath.Join(dir, "id_user"), WrongKeyPath: filepath.Join(dir, "id_wrong")}
	if err := s.start(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *SSHD) start() error {
	pw := make([]byte, 12)
	rand.Read(pw)
	s.Password = "pw-" + hex.EncodeToString(pw)
	if err := addUser(s.User, s.Password); err != nil {
		return err
	}
	hostKey := filepath.Join(s.dir, "host_ed25519")
	for _, k := range []string{hostKey, s.KeyPath, s.WrongKeyPath} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "clusterspace-test", "-f", k).CombinedOutput(); err != nil {
			return fmt.Errorf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, err := os.ReadFile(s.KeyPath + ".pub")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, "authorized_keys"), pub, 0o644); err != nil {
		return err
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return err
	}
	f := strings.Fields(string(hostPub))
	s.HostKeyLine = f[0] + " " + f[1]
	// Privilege separation needs this directory; a package install makes it, a fresh
	// container may not have it.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return err
	}

	// A port picked free and handed to sshd can be taken in between: try a few times.
	var lastErr error
	for range 3 {
		if s.Port, err = freePort(); err != nil {
			return err
		}
		if s.PasswordPort, err = freePort(); err != nil {
			return err
		}
		if lastErr = s.run(hostKey); lastErr == nil {
			return nil
		}
	}
	return lastErr
}

func (s *SSHD) run(hostKey string) error {
	config := filepath.Join(s.dir, "sshd_config")
	conf := fmt.Sprintf(`ListenAddress 127.0.0.1:%d
ListenAddress 127.0.0.1:%d
HostKey %s
PidFile none
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PermitRootLogin no
AllowUsers %s
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PrintMotd no
PrintLastLog no
Match LocalPort %d
	PasswordAuthentication yes
`, s.Port, s.PasswordPort, hostKey, filepath.Join(s.dir, "authorized_keys"), s.User, s.PasswordPort)
	if err := os.WriteFile(config, []byte(conf), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(sshdPath, "-D", "-e", "-f", config)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sshd: %w", err)
	}
	listening := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		n := 0
		var log strings.Builder
		for sc.Scan() {
			line := sc.Text()
			if n < 2 {
				log.WriteString(line + "\n")
				if strings.HasPrefix(line, "Server listening on 127.0.0.1") {
					if n++; n == 2 {
						listening <- nil
					}
				}
			}
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			s.mu.Unlock()
		}
		if n < 2 {
			listening <- fmt.Errorf("sshd stopped before listening:\n%s", log.String())
		}
	}()
	select {
	case err := <-listening:
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return err
		}
	case <-time.After(sshdStartTimeout):
		cmd.Process.Kill()
		cmd.Wait()
		return errors.New("sshd did not listen within 10 s")
	}
	s.cmd = cmd
	return nil
}

// DropConnections ends every open connection from the server's side, as a network outage or
// a server reboot would: each client sees its connection closed. Sessions the logins started
// in tmux live on (the tmux server is not a child of sshd).
func (s *SSHD) DropConnections() int {
	n := 0
	for _, pid := range descendants(s.cmd.Process.Pid) {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	for _, p := range procstat.All() {
		parent[p.PID] = p.Parent()
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for c, pp := range parent {
			if pp == p {
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(pid)
	return out
}

// KnownHosts writes a known_hosts file at path that already trusts this server.
func (s *SSHD) KnownHosts(path string) error {
	var b strings.Builder
	for _, p := range []int{s.Port, s.PasswordPort} {
		fmt.Fprintf(&b, "[%s]:%d %s\n", s.Host, p, s.HostKeyLine)
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// ClientOptions are the ssh client options that keep a test away from the machine's own ssh
// set-up: no ~/.ssh/config or /etc/ssh/ssh_config, host keys remembered in knownHosts only,
// and no keys from an agent.
func ClientOptions(knownHosts string) []string {
	return []string{"-F", "/dev/null", "-o", "UserKnownHostsFile=" + knownHosts,
		"-o", "GlobalKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none"}
}

// Close stops the server, ends the test user's tmux server and removes the user.
func (s *SSHD) Close() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
	if _, err := user.Lookup(s.User); err == nil {
		// Best effort: there may be no tmux server.
		exec.Command("runuser", "-u", s.User, "--", "tmux", "kill-server").Run()
		exec.Command("userdel", "-r", "-f", s.User).Run()
	}
	os.RemoveAll(s.dir)
}

// addUser adds the test user (or reuses one a killed test run left) with this password.
// useradd and chpasswd lock /etc/passwd: a package test starting at the same moment can hold
// it, so a busy lock is retried.
func addUser(name, password string) error {
	if _, err := user.Lookup(name); err != nil {
		if err := retry(exec.Command, "useradd", "-m", "-s", "/bin/bash", name); err != nil {
			return err
		}
	}
	return retry(func(n string, a ...string) *exec.Cmd {
		c := exec.Command(n, a...)
		c.Stdin = strings.NewReader(name + ":" + password + "\n")
		return c
	}, "chpasswd")
}

func retry(mk func(string, ...string) *exec.Cmd, name string, args ...string) error {
	var out []byte
	var err error
	for range 20 {
		if out, err = mk(name, args...).CombinedOutput(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
