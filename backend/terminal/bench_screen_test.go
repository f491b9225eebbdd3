package terminal_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// busyPanes is how many terminals print at once in BenchmarkThroughputBusyPanes.
const busyPanes = 8

// screenReadEvery is how often the benchmark's reader looks at every busy pane's screen (its
// state, its last lines), as waits, polls and the inbox do: each look brings the screen up to
// date with what was printed since.
const screenReadEvery = 100 * time.Millisecond

// rawCatAll runs the cat in busyPanes bare PTYs at once, each read by a plain loop, and times
// them to the last one's end mark: the ceiling.
func rawCatAll(b *testing.B, path string) time.Duration {
	type bare struct {
		cmd *exec.Cmd
		f   *os.File
	}
	var ptys []bare
	defer func() {
		for _, p := range ptys {
			p.f.Close()
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	}()
	for range busyPanes {
		cmd := exec.Command("/bin/bash", "--norc", "--noprofile", "-i")
		cmd.Env = append(os.Environ(), "PS1=$ ", "HOME="+b.TempDir())
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
		if err != nil {
			b.Fatal(err)
		}
		ptys = append(ptys, bare{cmd, f})
		buf := make([]byte, 4096)
		var seen []byte
		for !bytes.HasSuffix(bytes.TrimRight(seen, " "), []byte("$")) {
			n, err := f.Read(buf)
			if err != nil {
				b.Fatal(err)
			}
			seen = append(seen, buf[:n]...)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, busyPanes)
	start := time.Now()
	for _, p := range ptys {
		wg.Go(func() {
			p.f.Write([]byte("cat " + path + "; echo END-$((1+1))\r"))
			buf := make([]byte, 32<<10)
			var mark markSeen
			for {
				n, err := p.f.Read(buf)
				if err != nil {
					errs <- err
					return
				}
				if mark.feed(buf[:n]) {
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return took
}

// managedCatAll runs it in busyPanes Manager tabs at once, each with a subscriber, while a
// reader looks at every pane's screen every screenReadEvery, and times them to the last
// subscriber's end mark.
func managedCatAll(b *testing.B, m *terminal.Manager, path string, round int, read bool) (took time.Duration, reads, resyncs int) {
	var panes []string
	for k := range busyPanes {
		spec := terminal.Spec{PaneID: "pane-b5" + strconv.Itoa(round) + "x" + strconv.Itoa(k), Shell: "/bin/bash", Dir: b.TempDir(),
			Cols: 120, Rows: 40, Env: []string{"PS1=$ ", "HOME=" + b.TempDir()}}
		panes = append(panes, openBash(b, m, spec).PaneID)
	}
	defer func() {
		for _, p := range panes {
			m.ClosePane(p)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var outs []<-chan terminal.Chunk
	for _, p := range panes {
		_, out, err := m.Attach(ctx, p, "")
		if err != nil {
			b.Fatal(err)
		}
		outs = append(outs, out)
	}
	readerDone := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(readerDone)
		if !read {
			<-stop
			return
		}
		tick := time.NewTicker(screenReadEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for _, p := range panes {
				m.Status(p, "") // Best effort: the state at the cursor, as a poll reads it.
				m.Tail(p, "", 50)
				reads++
			}
		}
	}()
	var wg sync.WaitGroup
	var fellBehind atomic.Int64
	errs := make(chan error, busyPanes)
	start := time.Now()
	for k, p := range panes {
		wg.Go(func() {
			m.Write(p, "", []byte("cat "+path+"; echo END-$((1+1))\r"))
			var mark markSeen
			for c := range outs[k] {
				if c.Resync { // the subscriber fell behind: the replay that follows is a new stream
					fellBehind.Add(1)
					mark = markSeen{}
				}
				if mark.feed(c.Data) {
					return
				}
			}
			errs <- errors.New("an output channel closed early")
		})
	}
	wg.Wait()
	took = time.Since(start)
	close(stop)
	<-readerDone
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return took, reads, int(fellBehind.Load())
}

// BenchmarkThroughputBusyPanes: eight terminals each printing a 50 MB cat at once, through
// the Manager (scrollback, subscribers, screens) against the same eight read raw. ratio = raw
// time ÷ managed time (ABBA order, as BenchmarkThroughput). "screens-read" has every tab's
// screen read ten times a second, as waits, polls and the inbox do; "screens-unread" is the
// control: the screens cost nothing until read.
func BenchmarkThroughputBusyPanes(b *testing.B) {
	path := benchFile(b)
	for _, read := range []bool{false, true} {
		name := "screens-unread"
		if read {
			name = "screens-read"
		}
		b.Run(name, func(b *testing.B) {
			m := newManager(b, terminal.Options{})
			var raw, managed time.Duration
			reads, resyncs := 0, 0
			for i := 0; i < b.N; i++ {
				runtime.GC()
				raw += rawCatAll(b, path)
				for k := range 2 {
					runtime.GC()
					d, n, r := managedCatAll(b, m, path, 4*i+2*k+btoi(read), read)
					managed, reads, resyncs = managed+d, reads+n, resyncs+r
				}
				runtime.GC()
				raw += rawCatAll(b, path)
			}
			mb := float64(benchFileBytes) / (1 << 20) * busyPanes * float64(2*b.N)
			b.ReportMetric(mb/raw.Seconds(), "raw-MB/s")
			b.ReportMetric(mb/managed.Seconds(), "managed-MB/s")
			b.ReportMetric(raw.Seconds()/managed.Seconds(), "ratio")
			b.ReportMetric(float64(reads)/managed.Seconds(), "screen-reads/s")
			// Subscribers that fell behind (a loaded machine) and were resynchronised from the
			// scrollback, as a slow window would be; they still see every pane to its end.
			b.ReportMetric(float64(resyncs)/float64(2*b.N), "resyncs/op")
		})
	}
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}
