package panetabs

import (
	"slices"
	"testing"
)

type tab struct{ id string }

func (t *tab) ID() string { return t.id }

func TestFindShowAndRemove(t *testing.T) {
	t.Parallel()
	var p Tabs[*tab]
	if _, ok := p.Find(""); ok || p.Len() != 0 {
		t.Fatal("an empty pane found a tab")
	}
	a, b, c := &tab{"a"}, &tab{"b"}, &tab{"c"}
	p.Add(a)
	p.Add(b)
	p.Add(c)
	if old := p.Show(b); old != nil {
		t.Fatalf("a new pane showed %v", old)
	}
	if got, ok := p.Find(""); !ok || got != b {
		t.Fatalf(`Find("") = %v, %v; want the shown tab b`, got, ok)
	}
	if got, ok := p.Find("c"); !ok || got != c {
		t.Fatalf(`Find("c") = %v, %v`, got, ok)
	}
	if _, ok := p.Find("x"); ok {
		t.Fatal(`Find("x") found a tab`)
	}
	all := p.All()
	all[0] = nil // a copy: the pane keeps its own
	if !slices.Equal(p.All(), []*tab{a, b, c}) {
		t.Fatalf("All = %v", p.All())
	}

	// Removing a tab not shown shows no other; removing the shown one offers the one after it,
	// else the one before; removing the last offers none.
	for _, step := range []struct {
		remove, show, wantNext *tab
	}{
		{a, nil, nil},
		{b, nil, c},
		{c, c, nil},
	} {
		if step.show != nil {
			p.Show(step.show)
		}
		next, ok := p.Remove(step.remove)
		if !ok || next != step.wantNext {
			t.Fatalf("Remove(%s) = %v, %v; want %v", step.remove.id, next, ok, step.wantNext)
		}
	}
	if _, ok := p.Remove(a); ok || p.Len() != 0 {
		t.Fatalf("Remove of a tab no longer there said ok, or tabs are left: %v", p.All())
	}
}
