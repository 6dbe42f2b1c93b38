package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/pg"
)

// The reasons /readyz gives before it asks the database (issue 13 items 4
// and 6). Each is one constant line, so a load balancer's log and an
// operator's curl read the same words.
const (
	notReadyStarting  = "starting"
	notReadyWaitingDB = "waiting for the database"
	notReadyDraining  = "draining"
)

// readiness is the part of /readyz the process decides itself: a reason
// not to be ready (start-up, waiting for the database, draining), or none,
// in which case /readyz asks the database. It is safe for concurrent use;
// the zero value is ready, so a process that never ran answers from the
// database alone.
type readiness struct{ reason atomic.Pointer[string] }

// set records why the process is not ready.
func (r *readiness) set(reason string) { r.reason.Store(&reason) }

// clear lets /readyz answer from the database again.
func (r *readiness) clear() { r.reason.Store(nil) }

// notReady returns the recorded reason, if any.
func (r *readiness) notReady() (string, bool) {
	if s := r.reason.Load(); s != nil {
		return *s, true
	}
	return "", false
}

// after returns the timer channel of Deps.After, else of time.After.
func (p *Process) after(d time.Duration) <-chan time.Time {
	if p.deps.After != nil {
		return p.deps.After(d)
	}
	return time.After(d)
}

// startUp runs the start-up steps once the database answers: a ping, the
// instance row, the event-log partitions (in every role, because every role
// may append events). While PostgreSQL is unreachable or restarting
// (pg.IsUnavailable), it logs one line per failed attempt, answers /readyz
// with "waiting for the database" and tries again after a backoff that
// starts at database.startup_backoff_initial and doubles up to
// database.startup_backoff_max, until the waits add up to
// database.startup_wait. Any other error ends the start-up at once: waiting
// does not fix a wrong password or a missing migration.
func (p *Process) startUp(ctx context.Context) error {
	d := p.cfg.Database
	backoff, waited := d.StartupBackoffInitial, time.Duration(0)
	for attempt := 1; ; attempt++ {
		err := p.startOnce(ctx)
		if err == nil || !pg.IsUnavailable(err) || ctx.Err() != nil {
			return err
		}
		if waited+backoff > d.StartupWait {
			return fmt.Errorf("database unavailable after %d attempts within database.startup_wait: %w", attempt, err)
		}
		p.ready.set(notReadyWaitingDB)
		p.log.WarnContext(ctx, "database unavailable at start-up, retrying",
			slog.Int(string(attr.Count), attempt),
			slog.Int64(string(attr.Duration), backoff.Milliseconds()),
			otel.ErrorAttr(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.after(backoff):
		}
		waited += backoff
		backoff = min(2*backoff, d.StartupBackoffMax)
	}
}

// startOnce is one start-up attempt; every step is idempotent, so a retry
// after a half-done attempt is safe.
func (p *Process) startOnce(ctx context.Context) error {
	if err := p.pool.Ping(ctx); err != nil {
		return fmt.Errorf("pg: ping: %w", err)
	}
	if err := p.modules.Instance.Ensure(ctx); err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	if _, err := p.partition.Run(ctx, p.clock.Now()); err != nil {
		return fmt.Errorf("event log partitions: %w", err)
	}
	return nil
}

// fillPool opens and warms every connection the pool keeps open
// (database.open_all_conns) before the process reports ready and starts
// its jobs, consumers and API listener (ADR 0096): otherwise the first
// requests and deliveries share the machine with the warm-up of the
// connections still opening, 15 to 20 ms of PostgreSQL's time each. A
// connection the database
// refuses (max_connections reached) does not stop the start: the
// process says so in one line and serves with the connections it has,
// as it would without the wait. Only an ended ctx ends the start.
func (p *Process) fillPool(ctx context.Context) error {
	opened, err := pg.Fill(ctx, p.pool) // nothing to wait for without database.open_all_conns
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		p.log.WarnContext(ctx, "database refused connections at start-up; serving with fewer than database.max_conns",
			slog.Int(string(attr.Count), opened), otel.ErrorAttr(err))
	}
	return nil
}

// serve listens on s.Addr and serves s in the background; a serve error
// other than the orderly close is sent on failed.
func (p *Process) serve(ctx context.Context, s *http.Server, failed chan<- error) error {
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.Addr, err)
	}
	p.log.InfoContext(ctx, "listening", slog.String(string(attr.ServerAddress), l.Addr().String()))
	go func() {
		if err := s.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			failed <- err
		}
	}()
	return nil
}

// drain stops the process after SIGTERM (issue 13 item 6): /readyz answers
// 503 "draining" at once; the consumers and the job runtime, whose contexts
// ended with ctx, stop fetching and finish in-flight work within
// jobs.shutdown_timeout meanwhile; the API listener keeps serving for
// http.drain_delay when the role serves the API (so a load balancer takes
// the process out before it stops accepting), then stops accepting and
// gives in-flight requests http.shutdown_timeout. The operator listener
// (servers[0]) closes last, once the jobs have stopped and the idle
// connections of the webhook egress client are closed, so /metrics and
// /readyz stay readable for the whole drain. skipDelay is set when the stop
// comes from a failed start or listener, which leaves nothing to drain.
func (p *Process) drain(ctx context.Context, servers []*http.Server, skipDelay bool) error {
	p.ready.set(notReadyDraining)
	stopped := make(chan error, 1)
	go func() {
		if p.consumers != nil {
			p.consumers.Stop()
		}
		stopped <- p.jobs.Stop(context.WithoutCancel(ctx))
	}()
	if p.role.serves() && !skipDelay && p.cfg.HTTP.DrainDelay > 0 {
		p.log.Info("draining", slog.Int64(string(attr.Duration), p.cfg.HTTP.DrainDelay.Milliseconds()))
		<-p.after(p.cfg.HTTP.DrainDelay)
	}
	p.log.Info("stopping")
	shutdown := func(ss []*http.Server) {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.HTTP.ShutdownTimeout)
		defer cancel()
		for _, s := range ss {
			_ = s.Shutdown(stopCtx)
		}
	}
	shutdown(servers[1:])
	err := <-stopped
	// Nothing sends any more (the jobs stopped, the API answered its last
	// test request): the webhook egress client's kept-alive connections
	// to receivers are closed now rather than left to the receivers'
	// timeouts.
	if p.modules.WebhookEgress != nil {
		p.modules.WebhookEgress.CloseIdleConnections()
	}
	shutdown(servers[:1])
	return err
}
