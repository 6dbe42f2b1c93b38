// Package audittest reads the audit trail in tests: List returns the rows of
// audit_events that match a filter, oldest first, with their details decoded.
package audittest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/ids"
)

// Filter selects rows; empty fields match everything.
type Filter struct {
	// Action matches audit_events.action, for example "webhook_out.manage".
	Action string
	// ResourceKind and ResourceID match the target.
	ResourceKind string
	ResourceID   ids.ID
	// Outcome is "allow" or "deny".
	Outcome string
	// CorrelationID matches the request or job ID.
	CorrelationID string
}

// Row is one audit_events row.
type Row struct {
	ID            ids.ID
	CreatedAt     time.Time
	Action        string
	ActorID       ids.ID
	ActorKind     string
	ResourceKind  string
	ResourceID    ids.ID
	Outcome       string
	Reason        string
	CorrelationID string
	// Details holds strings, int64, bool and []any of strings, as stored.
	Details map[string]any
}

// List returns the rows matching f ordered by created_at, then id. It fails
// the test on a database error.
func List(t testing.TB, pool *pgxpool.Pool, f Filter) []Row {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT id, created_at, action, actor_id, actor_kind, resource_kind, resource_id,
		       outcome, coalesce(reason, ''), coalesce(correlation_id, ''), details::text
		FROM audit_events
		WHERE ($1 = '' OR action = $1)
		  AND ($2 = '' OR resource_kind = $2)
		  AND ($3::uuid IS NULL OR resource_id = $3)
		  AND ($4 = '' OR outcome = $4)
		  AND ($5 = '' OR correlation_id = $5)
		ORDER BY created_at, id`,
		f.Action, f.ResourceKind, f.ResourceID, f.Outcome, f.CorrelationID)
	if err != nil {
		t.Fatalf("audittest: query: %v", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var details string
		if err := rows.Scan(&r.ID, &r.CreatedAt, &r.Action, &r.ActorID, &r.ActorKind, &r.ResourceKind,
			&r.ResourceID, &r.Outcome, &r.Reason, &r.CorrelationID, &details); err != nil {
			t.Fatalf("audittest: scan: %v", err)
		}
		r.Details = decode(t, details)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("audittest: rows: %v", err)
	}
	return out
}

// decode reads the details object, turning JSON numbers into int64 because
// auditing.Int is the only number an entry can hold.
func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("audittest: details: %v", err)
	}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				t.Fatalf("audittest: detail %s is not an integer", k)
			}
			m[k] = i
		}
	}
	return m
}
