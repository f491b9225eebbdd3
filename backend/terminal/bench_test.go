package terminal_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

const benchFileBytes = 50 << 20

// benchFile writes 50 MB of printable lines, like a big log.
func benchFile(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "big.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	line := []byte("2025-01-01T00:00:00Z INFO request served path=/api/v1/items status=200 bytes=1234 id=")
	for n := 0; n < benchFileBytes; {
		k, _ := w.Write(line)
		k2, _ := w.WriteString(strconv.Itoa(n) + "\n")
		n += k + k2
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

// endMark is printed after the cat; typed as END-$((1+1)) so the echoed command line does
// not contain it.
const endMark = "END-2"

// markSeen watches a stream for endMark across chunk boundaries without allocating, so the
// subscriber itself costs next to nothing on either side of the comparison.
type markSeen struct{ edge []byte }

func (s *markSeen) feed(p []byte) bool {
	s.edge = append(s.edge, p[:min(len(p), len(endMark))]...)
	found := bytes.Contains(s.edge, []byte(endMark)) || bytes.Contains(p, []byte(endMark))
	s.edge = append(s.edge[:0], p[max(len(p)-len(endMark), 0):]...)
	return found
}

// rawCat runs the same command in a bare PTY with a plain read loop: the ceiling.
func rawCat(b *testing.B, path string) time.Duration {
	cmd := exec.Command("/bin/bash", "--norc", "--noprofile", "-i")
	cmd.Env = append(os.Environ(), "PS1=$ ", "HOME="+b.TempDir())
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { f.Close(); cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 32<<10)
	var seen []byte
	for !bytes.HasSuffix(bytes.TrimRight(seen, " "), []byte("$")) { // the first prompt
		n, err := f.Read(buf)
		if err != nil {
			b.Fatal(err)
		}
		seen = append(seen, buf[:n]...)
	}
	start := time.Now()
	f.Write([]byte("cat " + path + "; echo END-$((1+1))\r"))
	var mark markSeen
	for {
		n, err := f.Read(buf)
		if err != nil {
			b.Fatal(err)
		}
		if mark.feed(buf[:n]) {
			return time.Since(start)
		}
	}
}

// managedCat runs it in a Manager tab and times it to the last chunk a subscriber receives.
func managedCat(b *testing.B, m *terminal.Manager, path string, i int) time.Duration {
	spec := terminal.Spec{PaneID: "pane-be9c" + strconv.Itoa(i), Shell: "/bin/bash", Dir: b.TempDir(), Cols: 120, Rows: 40,
		Env: []string{"PS1=$ ", "HOME=" + b.TempDir()}}
	tab := openBash(b, m, spec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, out, err := m.Attach(ctx, tab.PaneID, "")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	m.Write(tab.PaneID, "", []byte("cat "+path+"; echo END-$((1+1))\r"))
	var mark markSeen
	for c := range out {
		if c.Resync {
			b.Fatal("the subscriber fell behind and was resynchronised")
		}
		if mark.feed(c.Data) {
			took := time.Since(start)
			m.ClosePane(tab.PaneID)
			return took
		}
	}
	b.Fatal("the output channel closed early")
	return 0
}

// BenchmarkThroughput: PTY → scrollback → batched chunks → subscriber for a 50 MB cat,
// against the same PTY read raw in the same run (a bash in a bare PTY and a plain read
// loop). ratio = managed MB/s ÷ raw MB/s. Each op is four 50 MB cats, two of each.
func BenchmarkThroughput(b *testing.B) {
	path := benchFile(b)
	m := newManager(b, terminal.Options{})
	var raw, managed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// ABBA order, each after a GC: neither side always runs first, on a warmer cache or
		// in the other's garbage, and a drift in machine speed cancels out.
		runtime.GC()
		raw += rawCat(b, path)
		runtime.GC()
		managed += managedCat(b, m, path, 2*i)
		runtime.GC()
		managed += managedCat(b, m, path, 2*i+1)
		runtime.GC()
		raw += rawCat(b, path)
	}
	mb := float64(benchFileBytes) / (1 << 20) * float64(2*b.N)
	b.ReportMetric(mb/raw.Seconds(), "raw-MB/s")
	b.ReportMetric(mb/managed.Seconds(), "managed-MB/s")
	b.ReportMetric(raw.Seconds()/managed.Seconds(), "ratio")
}

// BenchmarkKeystrokeEcho: Write of one key to the chunk carrying its echo, at a bash prompt.
func BenchmarkKeystrokeEcho(b *testing.B) {
	m := newManager(b, terminal.Options{})
	tab := openBash(b, m, bashSpec(b, "pane-ec40"))
	_, out, err := m.Attach(context.Background(), tab.PaneID, "")
	if err != nil {
		b.Fatal(err)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key, want := []byte("x"), []byte("x")
		if i%2 == 1 {
			key, want = []byte{0x7f}, []byte("\b") // readline rubs out with a backspace
		}
		start := time.Now()
		m.Write(tab.PaneID, "", key)
		for c := range out {
			if bytes.Contains(c.Data, want) {
				break
			}
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkIdleTerminalMemory opens idle bash terminals and measures, in this process, the
// heap and goroutine stacks they hold beyond the bytes of their scrollback (after a GC); and
// separately the proportional set size of each shell process (its private memory plus its
// share of libraries), which lives outside this process.
func BenchmarkIdleTerminalMemory(b *testing.B) {
	const terminals = 20
	for i := 0; i < b.N; i++ {
		m := terminal.NewManager(terminal.Options{})
		before := inUse()
		var scrollback int64
		var pss int
		var tabs []terminal.TabInfo
		for k := range terminals {
			tab := openBash(b, m, bashSpec(b, "pane-3e3"+strconv.Itoa(k)))
			tabs = append(tabs, tab)
		}
		time.Sleep(100 * time.Millisecond) // let every prompt and batch settle
		after := inUse()
		for _, tab := range tabs {
			st, _ := m.Status(tab.PaneID, "")
			scrollback += st.Cursor
			pss += shellPSS(tab.PID)
		}
		b.ReportMetric(float64(int64(after-before)-scrollback)/terminals/1024, "KiB/terminal-in-process")
		b.ReportMetric(float64(pss)/terminals, "KiB/shell-PSS")
		m.Shutdown()
	}
}

func inUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// shellPSS reads a process's proportional set size in KiB.
func shellPSS(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}
