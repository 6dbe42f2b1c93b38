package egresstest

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// Record is one captured log line: level, message and every attribute
// (including those added with Logger.With) as strings. Attributes inside a
// group are keyed "group.key".
type Record struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// Logs collects the records of the logger NewLogs returns. It is safe for
// concurrent use.
type Logs struct {
	mu      sync.Mutex
	records []Record
}

// NewLogs returns a logger that records every line at every level, and the
// collector to read them from.
func NewLogs() (*slog.Logger, *Logs) {
	l := &Logs{}
	return slog.New(&handler{logs: l}), l
}

// Records returns a copy of the records so far, oldest first.
func (l *Logs) Records() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.records)
}

// handler is the slog.Handler behind NewLogs.
type handler struct {
	logs   *Logs
	attrs  []slog.Attr
	prefix string
}

func (h *handler) Enabled(context.Context, slog.Level) bool { return true }

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Level: r.Level, Message: r.Message, Attrs: map[string]string{}}
	for _, a := range h.attrs {
		put(rec.Attrs, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		put(rec.Attrs, h.prefix, a)
		return true
	})
	h.logs.mu.Lock()
	defer h.logs.mu.Unlock()
	h.logs.records = append(h.logs.records, rec)
	return nil
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		c.attrs = append(c.attrs, slog.Attr{Key: h.prefix + a.Key, Value: a.Value})
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}

// put flattens a into m under prefix.
func put(m map[string]string, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			put(m, p, g)
		}
		return
	}
	m[prefix+a.Key] = v.String()
}
