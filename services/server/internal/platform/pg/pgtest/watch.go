package pgtest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"bothy/server/internal/kernel/watched"
	"bothy/server/internal/platform/pg"
)

// WatchChanges runs pg.WatchChanges over db as bothy_app for the rest of
// the test, reporting to events (ADR 0103), and returns once it listens; it
// fails the test when it does not listen within 30 s.
func (db *DB) WatchChanges(t testing.TB, events watched.Events) {
	t.Helper()
	w := &firstWatching{Events: events, listening: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pg.WatchChanges(ctx, db.App, w, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-w.listening:
	case <-time.After(30 * time.Second):
		t.Fatal("pgtest: WatchChanges did not listen within 30 s")
	}
}

// firstWatching closes listening at the first Watching.
type firstWatching struct {
	watched.Events
	once      sync.Once
	listening chan struct{}
}

func (w *firstWatching) Watching() {
	w.Events.Watching()
	w.once.Do(func() { close(w.listening) })
}
