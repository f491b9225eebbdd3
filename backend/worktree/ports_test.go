package worktree

import (
	"net"
	"strconv"
	"testing"
)

// Two pools (two processes of the app, as far as the lock files tell) never hand out the same
// range; a range whose port something listens on is skipped; an owner keeps its range, and
// a resumed owner gets the one it had even while another holds it; a released range is
// handed out again.
func TestPortsHandOutRangesNoOneElseHolds(t *testing.T) {
	dir := t.TempDir()
	a, b := &Ports{Dir: dir}, &Ports{Dir: dir}
	first, err := a.Reserve("f/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := a.Reserve("f/a", 0); again != first || !a.Holds("f/a") {
		t.Fatalf("the owner's range changed from %d to %d", first, again)
	}
	// Something of the person's listens on the next range's last port.
	busy := first + PortsPerRange
	for !portsFree(busy, PortsPerRange) {
		busy += PortsPerRange // the machine uses it already: the test takes the next
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(busy+PortsPerRange-1))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	second, err := b.Reserve("g/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || second == busy || second%PortsPerRange != 0 || second < FirstPort || second > LastPort {
		t.Fatalf("the second pool got %d (first %d, busy %d)", second, first, busy)
	}
	if resumed, _ := b.Reserve("f/a", first); resumed != first {
		t.Fatalf("a resumed owner got %d, want the %d it had", resumed, first)
	}
	b.Release("f/a")
	a.Release("f/a")
	if b.Holds("f/a") || a.Holds("f/a") {
		t.Fatal("released, still held")
	}
	if again, _ := b.Reserve("h/a", 0); again != first {
		t.Fatalf("after release the pool handed out %d, want the freed %d", again, first)
	}
	b.Retain(func(owner string) bool { return owner == "g/a" })
	if b.Holds("h/a") || !b.Holds("g/a") {
		t.Fatal("Retain kept the wrong owners")
	}
}
