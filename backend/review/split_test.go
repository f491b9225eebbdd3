package review

import (
	"strings"
	"testing"
)

// Lines longer than the reader's buffer are kept or cut whole, and a part is cut at a line's
// end, its whole size still counted.
func TestSplitPatch(t *testing.T) {
	long := "+" + strings.Repeat("y", 150<<10) + "\n"
	in := "diff --git a/a b/a\n+short\n" + long + "diff --git a/b b/b\n" + long + "+after\n" + "diff --git a/c b/c\n+no newline"
	var parts []filePatch
	if err := splitPatch(strings.NewReader(in), 200<<10, func(p filePatch) bool { parts = append(parts, p); return true }); err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 {
		t.Fatalf("%d parts", len(parts))
	}
	if string(parts[0].text) != "diff --git a/a b/a\n+short\n"+long || parts[0].cut {
		t.Errorf("part a: cut=%v, %d bytes", parts[0].cut, len(parts[0].text))
	}
	if string(parts[1].text) != "diff --git a/b b/b\n"+long+"+after\n" || parts[1].cut {
		t.Errorf("part b: cut=%v, %d bytes", parts[1].cut, len(parts[1].text))
	}
	if string(parts[2].text) != "diff --git a/c b/c\n+no newline" {
		t.Errorf("part c: %q", parts[2].text)
	}

	parts = nil
	splitPatch(strings.NewReader(in), 100<<10, func(p filePatch) bool { parts = append(parts, p); return true })
	if string(parts[0].text) != "diff --git a/a b/a\n+short\n" || !parts[0].cut || parts[0].size != int64(len("diff --git a/a b/a\n+short\n"+long)) {
		t.Errorf("part a cut at 100 KiB: cut=%v size=%d text=%q", parts[0].cut, parts[0].size, parts[0].text)
	}
	// Once cut, a short line after the long one is not kept either: the part stays a prefix.
	if string(parts[1].text) != "diff --git a/b b/b\n" || !parts[1].cut {
		t.Errorf("part b cut at 100 KiB: %q", parts[1].text)
	}

	parts = nil
	splitPatch(strings.NewReader(in), 1<<20, func(p filePatch) bool { parts = append(parts, p); return len(parts) < 2 })
	if len(parts) != 2 {
		t.Errorf("stopping after two parts read %d", len(parts))
	}
}
