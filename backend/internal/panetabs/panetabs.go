// Package panetabs is a pane's tabs as the terminal and browser managers keep them: in the
// order they were opened, with the one the pane shows. It does no locking: the lock of the
// manager that owns the pane guards every call.
package panetabs

import "slices"

// Tab is a tab of a pane, told apart from the others by its id.
type Tab interface {
	comparable
	ID() string
}

// Tabs is a pane's tabs; the zero value has none.
type Tabs[T Tab] struct {
	list   []T
	active T
}

// Add appends t as the pane's last tab; it does not show it.
func (p *Tabs[T]) Add(t T) { p.list = append(p.list, t) }

// All is a copy of the tabs in the order they were opened, to use once the lock is released.
func (p *Tabs[T]) All() []T { return slices.Clone(p.list) }

// Len is how many tabs the pane has.
func (p *Tabs[T]) Len() int { return len(p.list) }

// Active is the tab the pane shows, the zero T when it shows none.
func (p *Tabs[T]) Active() T { return p.active }

// Show makes t the tab the pane shows and returns the one it showed before.
func (p *Tabs[T]) Show(t T) (old T) {
	old, p.active = p.active, t
	return old
}

// Find is the tab with id, or the one the pane shows when id is ""; false when there is none.
func (p *Tabs[T]) Find(id string) (T, bool) {
	var none T
	if id == "" {
		return p.active, p.active != none
	}
	for _, t := range p.list {
		if t.ID() == id {
			return t, true
		}
	}
	return none, false
}

// Remove takes t out of the pane; false when it was not there. When t is the tab shown, next
// is the one to show instead, its neighbour (the tab after it, else the one before), or the
// zero T when none is left; the pane shows t until its owner shows another.
func (p *Tabs[T]) Remove(t T) (next T, ok bool) {
	i := slices.Index(p.list, t)
	if i < 0 {
		return next, false
	}
	p.list = slices.Delete(p.list, i, i+1)
	if p.active == t && len(p.list) > 0 {
		next = p.list[min(i, len(p.list)-1)]
	}
	return next, true
}
