package secrets

import (
	"context"
	"fmt"
	"log/slog"
)

// LogHandler wraps h so that no record it writes holds a secret m knows: the message and
// every attribute are masked. Errors and other values are masked as they print; one that held
// a secret is written as its masked text.
func (m *Masker) LogHandler(h slog.Handler) slog.Handler { return maskHandler{h, m} }

type maskHandler struct {
	h slog.Handler
	m *Masker
}

func (x maskHandler) Enabled(ctx context.Context, l slog.Level) bool { return x.h.Enabled(ctx, l) }

func (x maskHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, x.m.Mask(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(x.attr(a))
		return true
	})
	return x.h.Handle(ctx, out)
}

func (x maskHandler) WithAttrs(as []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = x.attr(a)
	}
	return maskHandler{x.h.WithAttrs(masked), x.m}
}

func (x maskHandler) WithGroup(name string) slog.Handler {
	return maskHandler{x.h.WithGroup(name), x.m}
}

func (x maskHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, x.m.Mask(v.String()))
	case slog.KindGroup:
		group := v.Group()
		masked := make([]any, len(group))
		for i, g := range group {
			masked[i] = x.attr(g)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		s := fmt.Sprintf("%+v", v.Any())
		if masked := x.m.Mask(s); masked != s {
			return slog.String(a.Key, masked)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
