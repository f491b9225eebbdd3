package terminal

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock (up to ABI 7) confines TCP only, and connect to pathname Unix sockets not at all.
// A seccomp filter closes the rest:
//   - At every level, socket() makes no Unix sockets. Those lead out of any sandbox: the
//     session D-Bus (and through it the keyring holding the app's API keys), ssh-agent,
//     docker.sock (root on the host). socketpair() still works, as do pipes.
//   - Below network_get (noNetwork) socket() makes only TCP sockets, which Landlock confines,
//     and netlink ones (local kernel queries such as `ip addr`): no UDP, no raw sockets. TCP
//     Fast Open is refused because it connects inside sendto/sendmsg.
//   - io_uring is refused: its socket and connect operations would bypass the filter.

// seccomp_data offsets (linux/seccomp.h): the syscall number, the audit arch, and the low 32
// bits of the arguments (little-endian, the only byte order filterArch accepts).
const (
	seccompNr   = 0
	seccompArch = 4
)

func seccompArg(i int) uint32 { return 16 + 8*uint32(i) }

// x32 syscalls are the x86-64 numbers with this bit set; they are refused outright.
const x32SyscallBit = 0x40000000

// filterArch is the audit arch of the syscalls this build's filter knows the numbers of.
func filterArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("cannot keep the terminal off UDP and Unix sockets on %s: the filter knows only amd64 and arm64", runtime.GOARCH)
}

// networkFilterSupport says why the filter cannot be built for this build, if it cannot.
func networkFilterSupport() error {
	_, err := filterArch()
	return err
}

// insn is a BPF instruction whose jumps name labels ("" is the next instruction).
type insn struct {
	label  string
	op     uint16
	k      uint32
	jt, jf string
}

// assemble resolves the labels into the kernel's relative jump offsets.
func assemble(prog []insn) ([]unix.SockFilter, error) {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	off := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := at[label]
		if !ok || to <= from || to-from-1 > 255 {
			return 0, fmt.Errorf("seccomp filter: bad jump to %q", label)
		}
		return uint8(to - from - 1), nil
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		jt, err := off(i, in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := off(i, in.jf)
		if err != nil {
			return nil, err
		}
		out[i] = unix.SockFilter{Code: in.op, Jt: jt, Jf: jf, K: in.k}
	}
	return out, nil
}

// socketFilter is the seccomp program described above; refused calls fail with EACCES,
// which programs report as "Permission denied", like Landlock's refusals.
func socketFilter(noNetwork bool) ([]unix.SockFilter, error) {
	arch, err := filterArch()
	if err != nil {
		return nil, err
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	prog := []insn{
		{op: ld, k: seccompArch},
		{op: jeq, k: arch, jf: "deny"}, // 32-bit calls (int 0x80's socketcall) have other numbers
		{op: ld, k: seccompNr},
		{op: jge, k: x32SyscallBit, jt: "deny"},
		{op: jeq, k: unix.SYS_IO_URING_SETUP, jt: "deny"},
	}
	if !noNetwork {
		return assemble(append(prog,
			insn{op: jeq, k: unix.SYS_SOCKET, jf: "allow"},
			insn{op: ld, k: seccompArg(0)}, // socket(domain, type, protocol)
			insn{op: jeq, k: unix.AF_UNIX, jt: "deny", jf: "allow"},
			insn{label: "deny", op: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
			insn{label: "allow", op: ret, k: unix.SECCOMP_RET_ALLOW},
		))
	}
	return assemble(append(prog, []insn{
		{op: jeq, k: unix.SYS_SENDTO, jt: "flags3"},
		{op: jeq, k: unix.SYS_SENDMMSG, jt: "flags3"},
		{op: jeq, k: unix.SYS_SENDMSG, jt: "flags2"},
		{op: jeq, k: unix.SYS_SOCKET, jf: "allow"},
		{op: ld, k: seccompArg(0)}, // socket(domain, type, protocol)
		{op: jeq, k: unix.AF_NETLINK, jt: "allow"},
		{op: jeq, k: unix.AF_INET, jt: "inet"},
		{op: jeq, k: unix.AF_INET6, jt: "inet", jf: "deny"},
		{label: "inet", op: ld, k: seccompArg(1)},
		{op: and, k: 0xf}, // SOCK_TYPE_MASK: without SOCK_NONBLOCK and SOCK_CLOEXEC
		{op: jeq, k: unix.SOCK_STREAM, jf: "deny"},
		{op: ld, k: seccompArg(2)},
		{op: jeq, k: 0, jt: "allow"}, // TCP is the default stream protocol; MPTCP and SCTP are not
		{op: jeq, k: unix.IPPROTO_TCP, jt: "allow", jf: "deny"},
		{label: "flags3", op: ld, k: seccompArg(3)},
		{op: jset, k: unix.MSG_FASTOPEN, jt: "deny", jf: "allow"},
		{label: "flags2", op: ld, k: seccompArg(2)},
		{op: jset, k: unix.MSG_FASTOPEN, jt: "deny", jf: "allow"},
		{label: "deny", op: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		{label: "allow", op: ret, k: unix.SECCOMP_RET_ALLOW},
	}...))
}

// restrictSockets installs socketFilter on every thread of this process; exec keeps it.
// no_new_privs (Landlock has set it already) lets an unprivileged process install it.
func restrictSockets(noNetwork bool) error {
	filter, err := socketFilter(noNetwork)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp filter: %w", errno)
	}
	runtime.KeepAlive(filter)
	return nil
}
