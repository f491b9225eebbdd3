package browser

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Input event types, as the pane's canvas sends them.
const (
	InputMouseMove = "mousemove"
	InputMouseDown = "mousedown"
	InputMouseUp   = "mouseup"
	InputClick     = "click"
	InputDblClick  = "dblclick"
	InputWheel     = "wheel"
	InputKeyDown   = "keydown"
	InputKeyUp     = "keyup"
	InputText      = "text"
)

// inputTimeout bounds one input event from the UI: a page that does not take input within
// it is busy, and the person will see that.
const inputTimeout = 5 * time.Second

// InputEvent is one input from a person looking at the pane. Coordinates are CSS pixels of
// the viewport; Key and Code are DOM KeyboardEvent values ("a"/"KeyA", "Enter"/"Enter").
type InputEvent struct {
	Type   string  `json:"type"`
	X      float64 `json:"x,omitempty"`
	Y      float64 `json:"y,omitempty"`
	Button string  `json:"button,omitempty"` // left (default), middle, right
	// Buttons is the DOM MouseEvent.buttons bitmask, for moves while dragging.
	Buttons int     `json:"buttons,omitempty"`
	DeltaX  float64 `json:"deltaX,omitempty"`
	DeltaY  float64 `json:"deltaY,omitempty"`
	Key     string  `json:"key,omitempty"`
	Code    string  `json:"code,omitempty"`
	Text    string  `json:"text,omitempty"`
	Alt     bool    `json:"alt,omitempty"`
	Ctrl    bool    `json:"ctrl,omitempty"`
	Meta    bool    `json:"meta,omitempty"`
	Shift   bool    `json:"shift,omitempty"`
}

func (e InputEvent) modifiers() input.Modifier {
	var m input.Modifier
	if e.Alt {
		m |= input.ModifierAlt
	}
	if e.Ctrl {
		m |= input.ModifierCtrl
	}
	if e.Meta {
		m |= input.ModifierMeta
	}
	if e.Shift {
		m |= input.ModifierShift
	}
	return m
}

// Input forwards one input event to the pane's active tab as a trusted DevTools input event.
func (m *Manager) Input(paneID string, ev InputEvent) error {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(m.ctx, inputTimeout)
	defer cancel()
	mods := ev.modifiers()
	button := mouseButton(ev.Button)
	switch ev.Type {
	case InputMouseMove:
		p := input.DispatchMouseEvent(input.MouseMoved, ev.X, ev.Y).WithModifiers(mods).WithButtons(int64(ev.Buttons))
		if ev.Buttons&1 != 0 {
			p = p.WithButton(input.Left)
		}
		return t.run(ctx, p)
	case InputMouseDown, InputMouseUp:
		typ := input.MousePressed
		if ev.Type == InputMouseUp {
			typ = input.MouseReleased
		}
		return t.run(ctx, input.DispatchMouseEvent(typ, ev.X, ev.Y).WithButton(button).WithClickCount(1).WithModifiers(mods))
	case InputClick:
		return t.run(ctx, clickActions(ev.X, ev.Y, button, 1, mods)...)
	case InputDblClick:
		return t.run(ctx, append(clickActions(ev.X, ev.Y, button, 1, mods), clickActions(ev.X, ev.Y, button, 2, mods)[1:]...)...)
	case InputWheel:
		return t.run(ctx, input.DispatchMouseEvent(input.MouseWheel, ev.X, ev.Y).WithDeltaX(ev.DeltaX).WithDeltaY(ev.DeltaY).WithModifiers(mods))
	case InputKeyDown, InputKeyUp:
		p, err := keyEvent(ev.Key, ev.Code, ev.Text, ev.Type == InputKeyDown, mods)
		if err != nil {
			return err
		}
		return t.run(ctx, p)
	case InputText:
		if ev.Text == "" {
			return nil
		}
		return t.run(ctx, input.InsertText(ev.Text))
	}
	return fmt.Errorf("unknown input type %q: use one of mousemove, mousedown, mouseup, click, dblclick, wheel, keydown, keyup, text", ev.Type)
}

func mouseButton(name string) input.MouseButton {
	switch strings.ToLower(name) {
	case "middle":
		return input.Middle
	case "right":
		return input.Right
	}
	return input.Left
}

// clickActions moves the mouse to (x, y) and presses and releases a button there.
func clickActions(x, y float64, button input.MouseButton, count int64, mods input.Modifier) []chromedp.Action {
	return []chromedp.Action{
		input.DispatchMouseEvent(input.MouseMoved, x, y).WithModifiers(mods),
		input.DispatchMouseEvent(input.MousePressed, x, y).WithButton(button).WithClickCount(count).WithModifiers(mods),
		input.DispatchMouseEvent(input.MouseReleased, x, y).WithButton(button).WithClickCount(count).WithModifiers(mods),
	}
}

// keysByName maps DOM key names ("Enter", "ArrowLeft", "F5") to their key definitions.
var keysByName = func() map[string]*kb.Key {
	byName := map[string]*kb.Key{}
	for r, k := range kb.Keys {
		if len([]rune(k.Key)) > 1 {
			if old, ok := byName[k.Key]; !ok || (old.Shift && !k.Shift) || r == '\r' {
				byName[k.Key] = k
			}
		}
	}
	return byName
}()

// keyAliases are the names people and models use for keys besides the DOM's own.
var keyAliases = map[string]string{
	"enter": "Enter", "return": "Enter", "tab": "Tab", "esc": "Escape", "escape": "Escape",
	"backspace": "Backspace", "delete": "Delete", "del": "Delete", "space": " ", "spacebar": " ",
	"up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
	"arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
	"home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown", "insert": "Insert",
}

// lookupKey finds a key by DOM name, alias or single character.
func lookupKey(name string) (*kb.Key, error) {
	if alias, ok := keyAliases[strings.ToLower(name)]; ok {
		name = alias
	}
	if rs := []rune(name); len(rs) == 1 {
		if k, ok := kb.Keys[rs[0]]; ok {
			return k, nil
		}
		return &kb.Key{Key: name, Text: name, Unmodified: name, Print: unicode.IsPrint(rs[0])}, nil
	}
	if k, ok := keysByName[name]; ok {
		return k, nil
	}
	if len(name) > 1 && (name[0] == 'f' || name[0] == 'F') {
		if k, ok := keysByName["F"+name[1:]]; ok {
			return k, nil
		}
	}
	return nil, fmt.Errorf("unknown key %q: use a DOM key name (Enter, Tab, Escape, Backspace, Delete, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, F1-F12) or a single character", name)
}

// keyEvent builds a key down or up event. A printable key without ctrl, alt or meta types
// its text; with them it is a shortcut, and its Windows key code is the letter's (VK_A…).
func keyEvent(name, code, text string, down bool, mods input.Modifier) (*input.DispatchKeyEventParams, error) {
	k, err := lookupKey(name)
	if err != nil {
		return nil, err
	}
	vk := k.Windows
	if rs := []rune(k.Key); len(rs) == 1 && unicode.IsLetter(rs[0]) && rs[0] < 128 {
		vk = int64(unicode.ToUpper(rs[0]))
	}
	if code == "" {
		code = k.Code
	}
	p := &input.DispatchKeyEventParams{Type: input.KeyUp, Key: k.Key, Code: code, WindowsVirtualKeyCode: vk,
		NativeVirtualKeyCode: vk, Modifiers: mods}
	if !down {
		return p, nil
	}
	p.Type = input.KeyRawDown
	shortcut := mods&(input.ModifierCtrl|input.ModifierAlt|input.ModifierMeta) != 0
	if text == "" && k.Print {
		text = k.Text
	}
	if text != "" && !shortcut {
		p.Type = input.KeyDown
		p.Text, p.UnmodifiedText = text, text
	}
	return p, nil
}

// pressActions presses and releases a key with modifiers, as one would on a keyboard.
func pressActions(name string, modifiers []string) ([]chromedp.Action, error) {
	var mods input.Modifier
	var held []string
	for _, m := range modifiers {
		switch strings.ToLower(strings.TrimSpace(m)) {
		case "ctrl", "control":
			mods |= input.ModifierCtrl
			held = append(held, "Control")
		case "alt", "option":
			mods |= input.ModifierAlt
			held = append(held, "Alt")
		case "meta", "cmd", "command", "super":
			mods |= input.ModifierMeta
			held = append(held, "Meta")
		case "shift":
			mods |= input.ModifierShift
			held = append(held, "Shift")
		default:
			return nil, fmt.Errorf("unknown modifier %q: use ctrl, alt, meta or shift", m)
		}
	}
	down, err := keyEvent(name, "", "", true, mods)
	if err != nil {
		return nil, err
	}
	up, _ := keyEvent(name, "", "", false, mods)
	var acts []chromedp.Action
	for _, h := range held {
		p, _ := keyEvent(h, "", "", true, mods)
		acts = append(acts, p)
	}
	acts = append(acts, down, up)
	for i := len(held) - 1; i >= 0; i-- {
		p, _ := keyEvent(held[i], "", "", false, 0)
		acts = append(acts, p)
	}
	return acts, nil
}

// typeActions types text key by key (keydown, keypress, input, keyup, all trusted);
// characters without a key on a US keyboard are inserted as text, as an IME would.
func typeActions(text string) []chromedp.Action {
	var acts []chromedp.Action
	var pending strings.Builder
	flush := func() {
		if pending.Len() > 0 {
			acts = append(acts, input.InsertText(pending.String()))
			pending.Reset()
		}
	}
	for _, r := range text {
		if r == '\n' {
			r = '\r'
		}
		if _, ok := kb.Keys[r]; !ok {
			pending.WriteRune(r)
			continue
		}
		flush()
		for _, p := range kb.Encode(r) {
			acts = append(acts, p)
		}
	}
	flush()
	return acts
}
