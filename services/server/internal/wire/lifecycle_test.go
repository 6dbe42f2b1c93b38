package wire_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/wire"
)

// fakeTimer stands in for time.After (wire.Deps.After): every wait is
// announced on asked with its duration and ends only when the test sends
// on fire, so the tests step through back-offs and the drain delay without
// waiting and without timing assertions.
type fakeTimer struct {
	asked chan time.Duration
	fire  chan time.Time
}

func newFakeTimer() *fakeTimer {
	return &fakeTimer{asked: make(chan time.Duration), fire: make(chan time.Time)}
}

func (f *fakeTimer) After(d time.Duration) <-chan time.Time {
	f.asked <- d
	return f.fire
}

// lockedBuffer collects log lines from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// freeAddrs returns n distinct free loopback addresses: each is listened
// on until all are chosen, so the kernel cannot hand out one port twice.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer func() { require.NoError(t, l.Close()) }()
		addrs[i] = l.Addr().String()
	}
	return addrs
}

// gate is a real TCP forwarder in front of PostgreSQL: while closed it
// accepts and drops every connection, as a database that is down or
// restarting does; once opened it forwards to the database. cut closes it
// again and breaks every forwarded connection, as a restart of PostgreSQL
// does.
type gate struct {
	addr string
	open atomic.Bool
	mu   sync.Mutex
	live map[net.Conn]bool
	// hold, when not nil, keeps every connection after the first admit
	// from reaching the database until it is closed; held counts them.
	hold     chan struct{}
	admit    int32
	held     atomic.Int32
	released sync.Once
}

// release lets the held connections through; later calls do nothing.
func (g *gate) release() { g.released.Do(func() { close(g.hold) }) }

// newGate starts g (closed, without an address yet) in front of target.
func newGate(t *testing.T, g *gate, target string) *gate {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	g.addr, g.live = l.Addr().String(), map[net.Conn]bool{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if !g.open.Load() {
				_ = c.Close()
				continue
			}
			g.mu.Lock()
			g.live[c] = true
			g.mu.Unlock()
			if g.hold != nil && g.admit <= 0 {
				g.held.Add(1)
				go func() {
					<-g.hold
					g.forward(c, target)
				}()
				continue
			}
			g.admit--
			go g.forward(c, target)
		}
	}()
	return g
}

// behindGate returns a rewrite of the database URL through a new gate,
// stored in *g, open or closed at first.
func behindGate(t *testing.T, g **gate, open bool) func(string) string {
	return behindGateOf(t, g, &gate{}, open)
}

// behindHoldingGate is behindGate with an open gate that lets admit
// connections through and holds the others until the test calls
// (*g).release.
func behindHoldingGate(t *testing.T, g **gate, admit int32) func(string) string {
	return behindGateOf(t, g, &gate{hold: make(chan struct{}), admit: admit}, true)
}

// behindGateOf returns a rewrite of the database URL through the gate
// made of proto, stored in *g, open or closed at first.
func behindGateOf(t *testing.T, g **gate, proto *gate, open bool) func(string) string {
	return func(app string) string {
		u, err := url.Parse(app)
		require.NoError(t, err)
		*g = newGate(t, proto, u.Host)
		(*g).open.Store(open)
		u.Host = (*g).addr
		return u.String()
	}
}

// cut closes the gate and breaks every forwarded connection.
func (g *gate) cut() {
	g.open.Store(false)
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.live {
		_ = c.Close()
	}
}

func (g *gate) forward(c net.Conn, target string) {
	defer func() {
		_ = c.Close()
		g.mu.Lock()
		delete(g.live, c)
		g.mu.Unlock()
	}()
	up, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer func() { _ = up.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

type runBundle struct {
	proc     *wire.Process
	timer    *fakeTimer
	logs     *lockedBuffer
	operator string
	api      string
	cancel   context.CancelFunc
	done     chan struct{} // closed when Run returned
	err      error         // what Run returned, once done is closed
}

// wait returns what Run returned, once it has.
func (b *runBundle) wait() error {
	<-b.done
	return b.err
}

// returned reports whether Run has returned.
func (b *runBundle) returned() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// startProcess assembles a process of role as `bothy serve` does, on free
// ports, with the fake timer, and runs it in the background. dbURL
// rewrites the database URL (nil keeps the test database's).
func startProcess(t *testing.T, role wire.Role, dbURL func(string) string, env ...string) *runBundle {
	t.Helper()
	return startProcessWith(t, role, dbURL, wire.Deps{}, env...)
}

// startProcessWith is startProcess with more dependencies in deps (its Log
// and After are the bundle's).
func startProcessWith(t *testing.T, role wire.Role, dbURL func(string) string, deps wire.Deps, env ...string) *runBundle {
	t.Helper()
	w := newWorld(t)
	if dbURL != nil {
		w.url = dbURL(w.url)
	}
	return startProcessIn(t, w, role, deps, env...)
}

// startProcessIn runs a process of role in the world w on free ports.
func startProcessIn(t *testing.T, w world, role wire.Role, deps wire.Deps, env ...string) *runBundle {
	t.Helper()
	b := newRunBundle(t, w, role, deps, env...)
	b.start(t)
	return b
}

// newRunBundle assembles a process of role in the world w on free ports,
// with the fake timer, without running it.
func newRunBundle(t *testing.T, w world, role wire.Role, deps wire.Deps, env ...string) *runBundle {
	t.Helper()
	addrs := freeAddrs(t, 2)
	b := &runBundle{timer: newFakeTimer(), logs: &lockedBuffer{}, operator: addrs[0], api: addrs[1], done: make(chan struct{})}
	cfg := w.config(t, append([]string{
		"BOTHY_HTTP_LISTEN_ADDRESS=" + b.api,
		"BOTHY_HTTP_OPERATOR_LISTEN_ADDRESS=" + b.operator,
	}, env...)...)
	deps.Log, deps.After = slog.New(slog.NewTextHandler(b.logs, nil)), b.timer.After
	var err error
	b.proc, err = wire.NewProcess(context.Background(), cfg, role, deps)
	require.NoError(t, err)
	return b
}

// start runs the process in the background until the test cancels it or
// ends.
func (b *runBundle) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	go func() {
		b.err = b.proc.Run(ctx)
		close(b.done)
	}()
	t.Cleanup(func() {
		cancel()
		// Release every wait the test did not step through (a drain delay,
		// a CA check) until Run has returned.
		for {
			select {
			case <-b.timer.asked:
				// The waiter may have left for its ended context.
				select {
				case b.timer.fire <- time.Now():
				case <-b.done:
					return
				}
			case <-b.done:
				return
			}
		}
	})
}

// get fetches path from addr and returns the status and body.
func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get("http://" + addr + path)
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body)
}

// waitReady polls /readyz on the listener at addr until it answers 200
// (the listener may not be up yet when the poll begins).
func waitReady(t *testing.T, addr string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	require.Eventually(t, func() bool {
		res, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 30*time.Second, 10*time.Millisecond, "the process becomes ready")
}

// waitDraining polls /readyz on the listener at addr until it answers
// "draining".
func waitDraining(t *testing.T, addr string) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, body := get(t, addr, "/readyz")
		return code == http.StatusServiceUnavailable && body == "draining\n"
	}, 30*time.Second, 10*time.Millisecond, "the process drains")
}

// readyzOf asks the process's own handler, which needs no listener.
func readyzOf(p *wire.Process) (int, string) {
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code, rec.Body.String()
}

func TestSIGTERMAnswersNotReadyAtOnceAndServesThroughTheDrainDelay(t *testing.T) {
	t.Parallel()
	b := startProcess(t, wire.RoleAPI, nil, "BOTHY_HTTP_DRAIN_DELAY=7s")
	waitReady(t, b.operator)
	code, body := get(t, b.api, "/readyz")
	require.Equal(t, http.StatusOK, code, body)

	b.cancel() // what SIGTERM does through signal.NotifyContext
	require.Equal(t, 7*time.Second, <-b.timer.asked, "the drain waits http.drain_delay")
	code, body = get(t, b.operator, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "draining\n", body)
	code, body = get(t, b.api, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code, "the API listener's /readyz too")
	require.Equal(t, "draining\n", body)
	code, _ = get(t, b.api, "/api/v1/instance/webhook-keys")
	require.Equal(t, http.StatusOK, code, "the API keeps serving during the drain delay")
	require.False(t, b.returned(), "Run keeps going during the drain delay")

	b.timer.fire <- time.Now()
	require.NoError(t, b.wait())
	_, err := net.Dial("tcp", b.api)
	require.Error(t, err, "the API listener is closed after the drain")
}

func TestStartUpWaitsForTheDatabaseAndSaysWhy(t *testing.T) {
	t.Parallel()
	var g *gate
	b := startProcess(t, wire.RoleWorker, behindGate(t, &g, false), "BOTHY_DATABASE_STARTUP_BACKOFF_INITIAL=500ms", "BOTHY_DATABASE_STARTUP_BACKOFF_MAX=800ms")

	require.Equal(t, 500*time.Millisecond, <-b.timer.asked, "the first wait is database.startup_backoff_initial")
	code, body := readyzOf(b.proc)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "waiting for the database\n", body)
	code, body = get(t, b.operator, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code, "the operator listener is up while the role waits")
	require.Equal(t, "waiting for the database\n", body)
	require.Equal(t, 1, b.logs.count("database unavailable at start-up"), "one log line per attempt")

	b.timer.fire <- time.Now()
	require.Equal(t, 800*time.Millisecond, <-b.timer.asked, "the wait doubles up to database.startup_backoff_max")
	require.Equal(t, 2, b.logs.count("database unavailable at start-up"))

	g.open.Store(true) // PostgreSQL is back
	b.timer.fire <- time.Now()
	waitReady(t, b.operator)
	require.Equal(t, 2, b.logs.count("database unavailable at start-up"))
	b.cancel()
	require.NoError(t, b.wait())
}

// TestReadyOnlyWithEveryConnectionOpen (ADR 0096): a server process opens
// and warms all its connections (database.open_all_conns) before it
// reports ready and starts its work. While the database has let only two
// of four connections through, the start-up steps run on those and
// /readyz keeps saying "starting"; once the others open, it is ready.
func TestReadyOnlyWithEveryConnectionOpen(t *testing.T) {
	t.Parallel()
	var g *gate
	b := startProcess(t, wire.RoleWorker, behindHoldingGate(t, &g, 2), "BOTHY_DATABASE_MAX_CONNS=4")
	t.Cleanup(g.release) // before the process's own clean-up, which waits for its pool
	require.Eventually(t, func() bool { return g.held.Load() == 2 && b.logs.count("msg=listening") == 1 }, 30*time.Second,
		5*time.Millisecond, "the pool asks for its other connections, and Run has begun")
	// The start-up steps take milliseconds on the connections let through;
	// a process that did not wait for the others would be ready well
	// within this.
	require.Never(t, func() bool { code, _ := readyzOf(b.proc); return code == http.StatusOK }, time.Second, 20*time.Millisecond,
		"ready with connections still being opened")
	code, body := readyzOf(b.proc)
	require.Equal(t, "starting\n", body, "code %d", code)

	g.release()
	waitReady(t, b.operator)
	b.cancel()
	require.NoError(t, b.wait())
}

// TestStartGoesOnWithTheConnectionsTheDatabaseGives (D-RT-12): a
// database that refuses some of a process's connections (here its role's
// CONNECTION LIMIT of 2 against database.max_conns 4, SQLSTATE 53300, as
// max_connections would) does not keep the process from starting: it
// says so in one warning and serves with the connections it opened.
func TestStartGoesOnWithTheConnectionsTheDatabaseGives(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.url = w.db.LimitedAppURL(t, 5)
	b := startProcessIn(t, w, wire.RoleWorker, wire.Deps{}, "BOTHY_DATABASE_MAX_CONNS=8")
	// The ping may draw a refused connection too: the start-up steps then
	// wait their backoff, which the test lets pass at once.
	require.Eventually(t, func() bool {
		select {
		case <-b.timer.asked:
			b.timer.fire <- time.Now()
		default:
		}
		if b.logs.count("msg=listening") == 0 {
			return false // Run has not begun: /readyz would answer from the database alone
		}
		code, _ := readyzOf(b.proc)
		return code == http.StatusOK
	}, 30*time.Second, 5*time.Millisecond, "the process becomes ready")
	require.Equal(t, 1, b.logs.count("database refused connections at start-up"), "one warning: %s", b.logs.String())
	for line := range strings.Lines(b.logs.String()) {
		if strings.Contains(line, "database refused connections at start-up") {
			require.Contains(t, line, "error.type=pg_53300", "the warning names the refusal")
			require.Regexp(t, `bothy\.count=[1-5] `, line, "and the connections opened, at most the role's limit")
		}
	}
	b.cancel()
	require.NoError(t, b.wait())
}

// TestRolesStartedTogetherNeverFail starts api, worker and all at once on
// one fresh database (issue 13 item 4): each becomes ready and stops
// cleanly.
func TestRolesStartedTogetherNeverFail(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var runs []*runBundle
	for _, role := range []wire.Role{wire.RoleAPI, wire.RoleWorker, wire.RoleAll, wire.RoleWorker} {
		runs = append(runs, startProcessIn(t, w, role, wire.Deps{}, "BOTHY_HTTP_DRAIN_DELAY=0s"))
	}
	for _, b := range runs {
		waitReady(t, b.operator)
		require.Zero(t, b.logs.count("level=ERROR"))
	}
	for _, b := range runs {
		b.cancel()
		require.NoError(t, b.wait())
	}
}

// TestARunningRoleSurvivesLosingTheDatabase: PostgreSQL goes away under a
// running worker (every connection broken, new ones refused); the role
// keeps running, /readyz says "database unavailable", and it is ready again
// once the database is back.
func TestARunningRoleSurvivesLosingTheDatabase(t *testing.T) {
	t.Parallel()
	var g *gate
	b := startProcess(t, wire.RoleWorker, behindGate(t, &g, true))
	waitReady(t, b.operator)

	g.cut()
	require.Eventually(t, func() bool {
		code, body := get(t, b.operator, "/readyz")
		return code == http.StatusServiceUnavailable && body == "database unavailable\n"
	}, 30*time.Second, 10*time.Millisecond, "/readyz names the lost database")
	require.False(t, b.returned(), "the role keeps running")

	g.open.Store(true)
	waitReady(t, b.operator)
	require.False(t, b.returned())
	b.cancel()
	require.NoError(t, b.wait())
}

// TestSIGTERMWhileWaitingForTheDatabaseIsAnOrderlyStop: a role stopped
// while it still waits for PostgreSQL returns no error.
func TestSIGTERMWhileWaitingForTheDatabaseIsAnOrderlyStop(t *testing.T) {
	t.Parallel()
	var g *gate // never opens
	b := startProcess(t, wire.RoleAPI, behindGate(t, &g, false))
	<-b.timer.asked
	b.cancel()
	require.NoError(t, b.wait())
}

func TestStartUpGivesUpAfterTheStartupWait(t *testing.T) {
	t.Parallel()
	var g *gate // never opens
	b := startProcess(t, wire.RoleWorker, behindGate(t, &g, false), "BOTHY_DATABASE_STARTUP_WAIT=1s", "BOTHY_DATABASE_STARTUP_BACKOFF_INITIAL=600ms")
	require.Equal(t, 600*time.Millisecond, <-b.timer.asked)
	b.timer.fire <- time.Now()
	err := b.wait()
	require.ErrorContains(t, err, "database.startup_wait", "the second wait would pass the limit")
	require.Equal(t, 1, b.logs.count("database unavailable at start-up"))
}

// String returns what was written so far.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
