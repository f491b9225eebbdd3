// Package keyenv keeps the API keys the app was started with out of every place a goal could
// read them. Hiding the variables from a pane's environment is not enough: the kernel keeps a
// process's starting environment readable in /proc/PID/environ, and on some kernels a
// Landlock-confined shell may still read that file of its parent. So before anything else runs,
// Seal moves the key variables out of the environment: it hands their values to a fresh image
// of the same binary through an anonymous memory file and re-executes with the variables
// removed. The new process's /proc/PID/environ never held them, nor does any child's
// (Chromium, shells, helpers); the app reads them through Lookup.
package keyenv

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// fdEnv carries, across the re-exec, the number of the descriptor holding the sealed values.
const fdEnv = "CLUSTERSPACE_SEALED_KEYS_FD"

var (
	mu     sync.Mutex
	sealed = map[string]string{}
)

// Names lists the variables that hold keys for this invocation: every variable of the
// environment that is a key by the rule (IsKey) and every variable named by a
// `--api-key-env VAR` flag (or `--critic-api-key-env`, or any other flag ending in
// "api-key-env", with "=" or as the next argument).
func Names(args []string) []string {
	names := inEnvironment()
	for i, a := range args {
		if a == "--" {
			break
		}
		flag, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !strings.HasSuffix(flag, "api-key-env") {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		if value != "" && !slices.Contains(names, value) {
			names = append(names, value)
		}
	}
	return names
}

// Seal is the first thing main does. In a process started with any key variable set, it
// re-executes the binary without them and does not return unless that fails. In the
// re-executed process it takes the values back from the memory file, for Lookup, and returns.
// With no key variable set it does nothing.
func Seal(args []string) error {
	if fd, ok := os.LookupEnv(fdEnv); ok {
		os.Unsetenv(fdEnv)
		return unseal(fd)
	}
	values := map[string]string{}
	for _, name := range Names(args) {
		if v, ok := os.LookupEnv(name); ok {
			values[name] = v
		}
	}
	if len(values) == 0 {
		return nil
	}
	fd, err := unix.MemfdCreate("clusterspace-keys", 0) // no CLOEXEC: the new image inherits it
	if err != nil {
		return fmt.Errorf("keeping the API key variables from the goals' shells: memfd_create: %w", err)
	}
	data, _ := json.Marshal(values)
	if _, err := unix.Write(fd, data); err != nil {
		unix.Close(fd)
		return fmt.Errorf("keeping the API key variables from the goals' shells: %w", err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		_, isKey := values[name]
		return isKey
	})
	env = append(env, fdEnv+"="+strconv.Itoa(fd))
	argv := append([]string{os.Args[0]}, args...)
	err = syscall.Exec("/proc/self/exe", argv, env)
	unix.Close(fd)
	return fmt.Errorf("keeping the API key variables from the goals' shells: re-executing %s: %w", os.Args[0], err)
}

func unseal(fdText string) error {
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return fmt.Errorf("%s=%q is not a descriptor this app passed itself; unset it and start again", fdEnv, fdText)
	}
	f := os.NewFile(uintptr(fd), "sealed-keys")
	defer f.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("reading the sealed API key variables: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("reading the sealed API key variables: %w", err)
	}
	values := map[string]string{}
	if err := json.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("reading the sealed API key variables: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, v := range values {
		sealed[k] = v
	}
	return nil
}

// Lookup returns a key variable's value: the sealed one if Seal moved it, else the
// environment's (tests, and processes that never sealed).
func Lookup(name string) (string, bool) {
	mu.Lock()
	v, ok := sealed[name]
	mu.Unlock()
	if ok {
		return v, true
	}
	return os.LookupEnv(name)
}
