package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	eventsync "bothy/server/internal/sync"
)

// templateDB is the database `bothy migrate --bootstrap` created and
// migrated; every scenario runs on a fresh copy of it, so no scenario
// sees the rows of another.
const templateDB = "bothy"

// dbTimeout bounds one administrative statement of the benchmark.
const dbTimeout = 30 * time.Second

// cluster is the administrative side of the benchmark's PostgreSQL
// cluster: the superuser URL (from a file, never printed) and the data
// directory (for the postmaster's PID).
type cluster struct {
	adminURL string
	dataDir  string
	// statements is true when pg_stat_statements is loaded
	// (shared_preload_libraries) and created in the template.
	statements bool
}

// connect opens a superuser connection to database db.
func (c *cluster) connect(ctx context.Context, db string) (*pgx.Conn, error) {
	u, err := url.Parse(c.adminURL)
	if err != nil {
		return nil, fmt.Errorf("the admin URL does not parse")
	}
	u.Path = "/" + db
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("connecting to database %s as superuser: %w", db, err)
	}
	return conn, nil
}

// with runs fn on a superuser connection to database db, within
// dbTimeout, and closes the connection again.
func (c *cluster) with(ctx context.Context, db string, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	conn, err := c.connect(ctx, db)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	return fn(ctx, conn)
}

// prepare creates the extension pg_stat_statements in the template when
// the cluster loaded it, so every copy has its view; without it the
// benchmark prints no statement figures.
func (c *cluster) prepare(ctx context.Context) error {
	return c.with(ctx, templateDB, func(ctx context.Context, conn *pgx.Conn) error {
		var libs string
		if err := conn.QueryRow(ctx, "SHOW shared_preload_libraries").Scan(&libs); err != nil {
			return fmt.Errorf("reading shared_preload_libraries: %w", err)
		}
		if !strings.Contains(libs, "pg_stat_statements") {
			return nil
		}
		if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			return fmt.Errorf("creating pg_stat_statements: %w", err)
		}
		c.statements = true
		return nil
	})
}

// warmWAL gives the cluster the WAL segments a server keeps for reuse
// once it has run through a few checkpoints (D-BE-8): it makes segments
// new WAL files (a record and a switch each), then a checkpoint recycles
// them, so the scenarios' WAL goes into segments that exist. A cluster
// made for the run has none ahead, and each segment it must create and
// fill with zeros (wal_init_zero) while commits wait stalled every commit
// of the rate scenario for about 15 ms every 15 s. Zero segments does
// nothing.
func (c *cluster) warmWAL(ctx context.Context, segments int) error {
	if segments <= 0 {
		return nil
	}
	return c.with(ctx, "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		for range segments {
			if _, err := conn.Exec(ctx, "SELECT pg_logical_emit_message(false, 'bothy-bench', ''), pg_switch_wal()"); err != nil {
				return fmt.Errorf("making WAL segments: %w", err)
			}
		}
		if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
			return fmt.Errorf("recycling WAL segments: %w", err)
		}
		return nil
	})
}

// logShape is the partitioning of the event log the bothy processes
// keep (sync.partition_interval, sync.partition_ahead,
// sync.event_retention), which ageLog follows.
type logShape struct {
	Interval, Ahead, Retention time.Duration
}

// agedLog is what ageLog left: the age it gave the log, the partitions
// of the log and the events it inserted.
type agedLog struct {
	Age                time.Duration
	Partitions, Events int
}

// ageLogTimeout bounds ageLog, whose insert of a month of events takes
// seconds.
const ageLogTimeout = 5 * time.Minute

// ageLog gives the event log of database db the shape it has in a server
// that ran for age (at most the retention, which maintenance would drop):
// the partitions maintenance made over the age and those it makes ahead
// (event_log_maintain_partitions, as the worker calls it), perDay events a
// day in seq order spread evenly over the age, and the cursor of the
// webhooks consumer at their head, where a server that ran all along
// keeps it, so a worker started on a copy reads none of them. A round's
// read of the log after its cursor and the read of its head look into
// every partition (D-SY-26), so a fresh log with a few partitions
// flatters them. Age zero changes nothing.
func (c *cluster) ageLog(ctx context.Context, db string, age time.Duration, perDay int, shape logShape) (agedLog, error) {
	var got agedLog
	age = min(age, shape.Retention)
	if age <= 0 {
		return got, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ageLogTimeout)
	defer cancel()
	conn, err := c.connect(ctx, db)
	if err != nil {
		return got, err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, `SELECT created, dropped FROM event_log_maintain_partitions(
			now() - $1::interval, $2::interval, $1::interval + $3::interval, $4::interval)`,
		age, shape.Interval, shape.Ahead, shape.Retention); err != nil {
		return got, fmt.Errorf("making the partitions of the aged log: %w", err)
	}
	events := int(float64(perDay) * age.Hours() / 24)
	// nextval runs after the ORDER BY, so seqs follow the times.
	if _, err := conn.Exec(ctx, `
		INSERT INTO event_log (seq, id, type, resource_kind, resource_id, receive_action, payload, occurred_at)
		SELECT nextval('event_log_seq'), uuidv7(), 'message.created', 'message', uuidv7(), 'message.read',
		       '{"text": "Sam, a message of the month before the benchmark"}',
		       now() - $1::interval + (g * ($2::bigint / $3::bigint)) * interval '1 microsecond'
		FROM generate_series(0, $3::bigint - 1) g
		ORDER BY g`, age, age.Microseconds(), events); err != nil {
		return got, fmt.Errorf("inserting the events of the aged log: %w", err)
	}
	if _, err := conn.Exec(ctx, `
		INSERT INTO consumer_cursors (name, last_seq, updated_at)
		SELECT $1, coalesce(max(seq), 0), now() FROM event_log
		ON CONFLICT (name) DO UPDATE SET last_seq = EXCLUDED.last_seq, updated_at = EXCLUDED.updated_at`,
		string(eventsync.ConsumerWebhooks)); err != nil {
		return got, fmt.Errorf("moving the webhooks consumer past the aged log: %w", err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE event_log"); err != nil {
		return got, fmt.Errorf("analyzing the aged log: %w", err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'event_log'::regclass`).
		Scan(&got.Partitions); err != nil {
		return got, fmt.Errorf("counting the partitions of the aged log: %w", err)
	}
	got.Age, got.Events = age, events
	return got, nil
}

// createDB creates database name as a copy of the template, owned by the
// template's owner.
func (c *cluster) createDB(ctx context.Context, name string) error {
	return c.with(ctx, "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		var owner string
		if err := conn.QueryRow(ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", templateDB).Scan(&owner); err != nil {
			return fmt.Errorf("reading the owner of the template: %w", err)
		}
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+
			" TEMPLATE "+pgx.Identifier{templateDB}.Sanitize()+" OWNER "+pgx.Identifier{owner}.Sanitize())
		if err != nil {
			return fmt.Errorf("creating database %s: %w", name, err)
		}
		return nil
	})
}

// dropDB drops database name, ending the connections still open to it.
func (c *cluster) dropDB(ctx context.Context, name string) error {
	return c.with(ctx, "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("dropping database %s: %w", name, err)
		}
		return nil
	})
}

// cpu returns the CPU ticks of the cluster so far: the postmaster and its
// children (clusterTicks), and each living child's own by PID
// (clusterChildren).
func (c *cluster) cpu() (uint64, map[int]uint64, error) {
	pm, err := readPostmasterPID(c.dataDir)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the postmaster's PID: %w", err)
	}
	stats, err := readAllStats()
	if err != nil {
		return 0, nil, err
	}
	return clusterTicks(stats, pm), clusterChildren(stats, pm), nil
}

// sessionNames returns the application_name of every session of the
// cluster by the PID of its backend (pg_stat_activity): a bothy process
// names its pool's sessions after its role ("bothy-api",
// "bothy-worker").
func (c *cluster) sessionNames(ctx context.Context) (map[int]string, error) {
	names := map[int]string{}
	err := c.with(ctx, "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT pid, application_name FROM pg_stat_activity WHERE backend_type = 'client backend'`)
		if err != nil {
			return fmt.Errorf("reading the sessions: %w", err)
		}
		var pid int32
		var name string
		_, err = pgx.ForEachRow(rows, []any{&pid, &name}, func() error {
			names[int(pid)] = name
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading the sessions: %w", err)
		}
		return nil
	})
	return names, err
}

// statement is one row of pg_stat_statements for a scenario's database.
type statement struct {
	Query string
	// Name is the name sqlc gave the query of Query, "" when it has none
	// (queryNames).
	Name    string
	Calls   int64
	TotalMS float64
	// PlanMS is the time spent planning the statement
	// (pg_stat_statements.track_planning, which e2e.sh turns on).
	PlanMS    float64
	SharedHit int64
	Rows      int64
}

// resetStatements empties pg_stat_statements (all databases: the
// scenarios run one after another).
func (c *cluster) resetStatements(ctx context.Context, db string) error {
	if !c.statements {
		return nil
	}
	return c.with(ctx, db, func(ctx context.Context, conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
			return fmt.Errorf("resetting pg_stat_statements: %w", err)
		}
		return nil
	})
}

// readStatements returns the statements run in database db since the
// last reset by roles other than the superuser (the benchmark's own
// queries), ordered by total time, the largest first; nil without
// pg_stat_statements.
func (c *cluster) readStatements(ctx context.Context, db string) ([]statement, error) {
	if !c.statements {
		return nil, nil
	}
	var out []statement
	err := c.with(ctx, db, func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `
SELECT query, calls, total_exec_time, total_plan_time, shared_blks_hit, rows
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
   AND userid <> (SELECT oid FROM pg_roles WHERE rolname = current_user)
 ORDER BY total_exec_time DESC`)
		if err != nil {
			return fmt.Errorf("reading pg_stat_statements: %w", err)
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (statement, error) {
			var s statement
			err := r.Scan(&s.Query, &s.Calls, &s.TotalMS, &s.PlanMS, &s.SharedHit, &s.Rows)
			return s, err
		})
		if err != nil {
			return fmt.Errorf("reading pg_stat_statements: %w", err)
		}
		return nil
	})
	return out, err
}

// readEventTimes reads, for every event a delivery row of database db
// names, when the api read its clock for it and when the first round made
// its rows (eventTimes), by event ID.
func (c *cluster) readEventTimes(ctx context.Context, db string) (map[string]eventTimes, error) {
	out := map[string]eventTimes{}
	err := c.with(ctx, db, func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `
SELECT event_id::text, min(event_occurred_at), min(created_at)
  FROM webhook_deliveries
 GROUP BY event_id`)
		if err != nil {
			return fmt.Errorf("reading the deliveries' times: %w", err)
		}
		var id string
		var ev eventTimes
		_, err = pgx.ForEachRow(rows, []any{&id, &ev.Occurred, &ev.Routed}, func() error {
			out[id] = ev
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading the deliveries' times: %w", err)
		}
		return nil
	})
	return out, err
}

// walStats is the cluster's WAL since the last resetWAL: what it wrote
// (pg_stat_wal) and how often and how long its backends waited for the
// WAL to reach the disk (the fsyncs of pg_stat_io, object wal), which a
// synchronous COMMIT does. The counts of a backend reach the cluster's
// statistics when it idles, at most once a second, so the last second of
// a scenario may be missing.
type walStats struct {
	Bytes   int64
	Flushes int64
	// FlushMS is the time of the flushes, when Timed.
	FlushMS float64
	// Timed is true when track_wal_io_timing was on (e2e.sh turns it on).
	Timed bool
}

// resetWAL empties the cluster's WAL and I/O statistics (shared by every
// database: the scenarios run one after another).
func (c *cluster) resetWAL(ctx context.Context) error {
	return c.with(ctx, "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, "SELECT pg_stat_reset_shared('wal'), pg_stat_reset_shared('io')"); err != nil {
			return fmt.Errorf("resetting the WAL statistics: %w", err)
		}
		return nil
	})
}

// readWAL returns the cluster's WAL statistics since the last resetWAL.
func (c *cluster) readWAL(ctx context.Context) (walStats, error) {
	var s walStats
	err := c.with(ctx, "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, `
SELECT (SELECT wal_bytes FROM pg_stat_wal)::bigint,
       coalesce(sum(fsyncs), 0)::bigint, coalesce(sum(fsync_time), 0)::float8,
       current_setting('track_wal_io_timing') = 'on'
  FROM pg_stat_io
 WHERE object = 'wal'`).Scan(&s.Bytes, &s.Flushes, &s.FlushMS, &s.Timed)
		if err != nil {
			return fmt.Errorf("reading the WAL statistics: %w", err)
		}
		return nil
	})
	return s, err
}
