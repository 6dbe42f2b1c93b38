package pg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Role names. bothy_app is named by the specification and by every grant in
// the migrations; the owner name only appears here and in the URLs.
const (
	// OwnerRole owns the database, its schema and every table; migrations run
	// as it.
	OwnerRole = "bothy_owner"
	// AppRole is the runtime role: rows only, no DDL, no ownership.
	AppRole = "bothy_app"
)

// BootstrapOptions describe the roles and database to create.
type BootstrapOptions struct {
	// AdminURL connects as a superuser or a role with CREATEROLE and CREATEDB.
	AdminURL string
	// Database is the name of the bothy database.
	Database string
	// OwnerPassword and AppPassword become the roles' passwords; empty leaves
	// a role without password (trust or peer authentication, as in pgtest).
	OwnerPassword, AppPassword string
}

// Bootstrap creates (or updates) OwnerRole and AppRole and the database owned
// by OwnerRole, with AppRole allowed to connect and to use the public schema
// but not to create in it. It is idempotent: existing roles get their
// password set again, an existing database is kept.
func Bootstrap(ctx context.Context, o BootstrapOptions) error {
	conn, err := pgx.Connect(ctx, o.AdminURL)
	if err != nil {
		return fmt.Errorf("pg: bootstrap: connecting as administrator: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))

	for _, r := range []struct{ name, password, extra string }{
		{OwnerRole, o.OwnerPassword, ""},
		{AppRole, o.AppPassword, " NOINHERIT"},
	} {
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, r.name).Scan(&exists); err != nil {
			return fmt.Errorf("pg: bootstrap: reading roles: %w", err)
		}
		verb := "CREATE"
		if exists {
			verb = "ALTER"
		}
		stmt := fmt.Sprintf("%s ROLE %s LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION%s", verb, pgx.Identifier{r.name}.Sanitize(), r.extra)
		if r.password != "" {
			// Role passwords cannot be bind parameters; quote them as literals.
			stmt += " PASSWORD " + quoteLiteral(r.password)
		}
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("pg: bootstrap: %s role %s failed", verb, r.name)
		}
	}

	var dbExists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, o.Database).Scan(&dbExists); err != nil {
		return fmt.Errorf("pg: bootstrap: reading databases: %w", err)
	}
	db := pgx.Identifier{o.Database}.Sanitize()
	if !dbExists {
		if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s OWNER %s", db, OwnerRole)); err != nil {
			return fmt.Errorf("pg: bootstrap: creating database: %w", err)
		}
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("REVOKE ALL ON DATABASE %s FROM PUBLIC; GRANT CONNECT, TEMPORARY ON DATABASE %s TO %s", db, db, AppRole)); err != nil {
		return fmt.Errorf("pg: bootstrap: database grants: %w", err)
	}

	dbURL, err := withDatabase(o.AdminURL, o.Database)
	if err != nil {
		return err
	}
	dbConn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("pg: bootstrap: connecting to the new database: %w", err)
	}
	defer dbConn.Close(context.WithoutCancel(ctx))
	_, err = dbConn.Exec(ctx, fmt.Sprintf(`
		ALTER SCHEMA public OWNER TO %[1]s;
		REVOKE ALL ON SCHEMA public FROM PUBLIC;
		GRANT USAGE ON SCHEMA public TO %[2]s;`, OwnerRole, AppRole))
	if err != nil {
		return fmt.Errorf("pg: bootstrap: schema grants: %w", err)
	}
	return nil
}

func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}

// withDatabase returns url with its database replaced.
func withDatabase(url, database string) (string, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "", fmt.Errorf("pg: administrator URL does not parse")
	}
	cfg.Database = database
	return ConnString(cfg.Host, cfg.Port, cfg.User, cfg.Password, database), nil
}

// ConnString builds a postgres:// URL with sslmode=disable for loopback use.
func ConnString(host string, port uint16, user, password, database string) string {
	auth := user
	if password != "" {
		auth += ":" + urlEscape(password)
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", auth, host, port, database)
}
