package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var testClasses = map[string]bool{"config": true, "transient": true}

// goodTable is a migration that follows every rule.
const goodTable = `-- +goose Up
CREATE TABLE webhook_subscriptions (
    id uuid PRIMARY KEY DEFAULT uuidv7(),
    note text NOT NULL DEFAULT 'a; b' -- a semicolon in a string
);
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_subscriptions TO bothy_app;
COMMENT ON TABLE webhook_subscriptions IS 'Subscriptions of apps. retention: config (deleted with the app).';

-- +goose Down
DROP TABLE webhook_subscriptions;
`

func TestLintFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string // substrings of the problems, in order; nil for none
	}{
		{"a table with grant and retention comment passes", goodTable, nil},
		{"grants without a table pass", "-- +goose Up\nGRANT SELECT ON goose_db_version TO bothy_app;\n-- +goose Down\nREVOKE ALL ON goose_db_version FROM bothy_app;\n", nil},
		{"a missing Down section is a problem", "-- +goose Up\nSELECT 1;\n", []string{"exactly one `-- +goose Up` and one `-- +goose Down`"}},
		{"Down before Up is a problem", "-- +goose Down\nSELECT 1;\n-- +goose Up\nSELECT 1;\n", []string{"must come before"}},
		{"a table without a grant is a problem", strings.Replace(goodTable, "GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_subscriptions TO bothy_app;", "", 1), []string{"has no GRANT"}},
		{"a grant to another role does not count", strings.Replace(goodTable, "TO bothy_app", "TO bothy_owner", 1), []string{"has no GRANT"}},
		{"a table without a comment is a problem", strings.Replace(goodTable, "COMMENT ON TABLE webhook_subscriptions IS 'Subscriptions of apps. retention: config (deleted with the app).';", "", 1), []string{"has no COMMENT ON TABLE"}},
		{"a comment without a retention class is a problem", strings.Replace(goodTable, "retention: config", "kept forever", 1), []string{"names no retention class"}},
		{"an unknown retention class is a problem", strings.Replace(goodTable, "retention: config", "retention: forever", 1), []string{`unknown retention class "forever"`}},
		{"a comment in Down does not count", strings.Replace(goodTable, "COMMENT ON TABLE webhook_subscriptions IS 'Subscriptions of apps. retention: config (deleted with the app).';", "", 1) + "COMMENT ON TABLE webhook_subscriptions IS 'retention: config';\n", []string{"has no COMMENT ON TABLE"}},
		{"TRUNCATE for the runtime role is a problem", strings.Replace(goodTable, "SELECT, INSERT, UPDATE, DELETE", "SELECT, TRUNCATE", 1), []string{"grants TRUNCATE to bothy_app"}},
		{"ALL PRIVILEGES for the runtime role is a problem", strings.Replace(goodTable, "SELECT, INSERT, UPDATE, DELETE", "ALL PRIVILEGES", 1), []string{"grants ALL to bothy_app"}},
		{"REFERENCES and TRIGGER are problems", strings.Replace(goodTable, "SELECT, INSERT, UPDATE, DELETE", "REFERENCES", 1) + "-- +goose Up\n", []string{"exactly one", "grants REFERENCES"}},
		{"CREATE on the schema is a problem", "-- +goose Up\nGRANT USAGE, CREATE ON SCHEMA public TO bothy_app;\n-- +goose Down\nSELECT 1;\n", []string{"grants CREATE to bothy_app"}},
		{"role membership is a problem", "-- +goose Up\nGRANT bothy_owner TO bothy_app;\n-- +goose Down\nSELECT 1;\n", []string{"grants a role to bothy_app"}},
		{"default privileges with TRIGGER are a problem", "-- +goose Up\nALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, TRIGGER ON TABLES TO bothy_app;\n-- +goose Down\nSELECT 1;\n", []string{"default privileges grant TRIGGER"}},
		{"ownership is a problem", "-- +goose Up\nALTER TABLE t OWNER TO bothy_app;\n-- +goose Down\nSELECT 1;\n", []string{"makes bothy_app an owner"}},
		{"a role attribute is a problem", "-- +goose Up\nALTER ROLE bothy_app WITH CREATEDB;\n-- +goose Down\nSELECT 1;\n", []string{"attribute CREATEDB"}},
		{"DDL words in a function body are not grants", "-- +goose Up\n-- +goose StatementBegin\nCREATE FUNCTION f() RETURNS void AS $$ BEGIN EXECUTE 'GRANT ALL ON t TO bothy_app'; END $$ LANGUAGE plpgsql;\n-- +goose StatementEnd\n-- +goose Down\nDROP FUNCTION f();\n", nil},
		{"schema-qualified and quoted names match", "-- +goose Up\nCREATE TABLE IF NOT EXISTS public.\"Audit\" (id int);\nGRANT SELECT ON TABLE public.\"Audit\" TO bothy_app;\nCOMMENT ON TABLE \"Audit\" IS 'retention: transient';\n-- +goose Down\nDROP TABLE \"Audit\";\n", nil},
		{"a partition inherits its parent's rules", strings.Replace(goodTable, "-- +goose Down", "CREATE TABLE event_log_p1 PARTITION OF event_log FOR VALUES FROM (1) TO (2);\n-- +goose Down", 1), nil},
		{"block comments hide statements", "-- +goose Up\n/* CREATE TABLE x (id int); */\nSELECT 1;\n-- +goose Down\nSELECT 1;\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := LintFile("00040_webhook_subscriptions.sql", tc.src, testClasses)
			require.Len(t, got, len(tc.want), "%v", got)
			for i, w := range tc.want {
				require.Contains(t, got[i].String(), w)
			}
		})
	}
}

func TestLintFileNamesTheLine(t *testing.T) {
	t.Parallel()
	src := strings.Replace(goodTable, "GRANT SELECT, INSERT, UPDATE, DELETE", "GRANT TRUNCATE", 1)
	got := LintFile("00040_x.sql", src, testClasses)
	require.Len(t, got, 1)
	require.Equal(t, 6, got[0].Line)
	require.True(t, strings.HasPrefix(got[0].String(), "00040_x.sql:6: "), got[0].String())
}

func TestLintNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files []string
		want  []string
	}{
		{"consecutive numbers pass", []string{"00001_a.sql", "00002_b.sql", "00003_c.sql"}, nil},
		{"module ranges leave gaps", []string{"00001_a.sql", "00002_b.sql", "00010_c.sql", "00011_d.sql", "00035_e.sql"}, nil},
		{"a duplicate number is a problem", []string{"00001_a.sql", "00001_b.sql"}, []string{"used by 00001_a.sql too"}},
		{"four digits are a problem", []string{"0001_a.sql"}, []string{"name must be NNNNN_<snake_case>.sql"}},
		{"camel case is a problem", []string{"00001_addTable.sql"}, []string{"name must be"}},
		{"number zero is a problem", []string{"00000_a.sql"}, []string{"start at 00001"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := LintNames(tc.files)
			require.Len(t, got, len(tc.want), "%v", got)
			for i, w := range tc.want {
				require.Contains(t, got[i].String(), w)
			}
		})
	}
}

func TestCheckLock(t *testing.T) {
	t.Parallel()
	a, b, c := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	tests := []struct {
		name            string
		current, merged Lock
		sums            map[string]string
		want            []string
	}{
		{"a matching lock passes", Lock{"1.sql": a}, Lock{"1.sql": a}, map[string]string{"1.sql": a}, nil},
		{"no lock at HEAD yet passes", Lock{"1.sql": a}, nil, map[string]string{"1.sql": a}, nil},
		{"a new file without a line is a problem", Lock{"1.sql": a}, Lock{"1.sql": a}, map[string]string{"1.sql": a, "2.sql": b}, []string{"2.sql: has no line"}},
		{"an edited new file needs a new lock", Lock{"1.sql": a, "2.sql": b}, Lock{"1.sql": a}, map[string]string{"1.sql": a, "2.sql": c}, []string{"2.sql: does not match its line"}},
		{"an edited merged file is a problem", Lock{"1.sql": a}, Lock{"1.sql": a}, map[string]string{"1.sql": b}, []string{"was changed after it was merged"}},
		{"a merged line rewritten to hide an edit is a problem", Lock{"1.sql": b}, Lock{"1.sql": a}, map[string]string{"1.sql": b}, []string{"differs from git HEAD's"}},
		{"a removed merged file is a problem", Lock{"1.sql": a}, Lock{"1.sql": a}, map[string]string{}, []string{"names 1.sql, which does not exist"}},
		{"a dropped merged line is a problem", Lock{}, Lock{"1.sql": a}, map[string]string{"1.sql": a}, []string{"1.sql: has no line", "lost the line of the merged migration 1.sql"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CheckLock(tc.current, tc.merged, tc.sums)
			require.Len(t, got, len(tc.want), "%v", got)
			for i, w := range tc.want {
				require.Contains(t, got[i].String(), w)
			}
		})
	}
}

func TestNewLockKeepsMergedLines(t *testing.T) {
	t.Parallel()
	a, b, c := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	l := NewLock(Lock{"1.sql": a}, map[string]string{"1.sql": b, "2.sql": c})
	require.Equal(t, Lock{"1.sql": a, "2.sql": c}, l)
	parsed, probs := ParseLock(l.Format())
	require.Empty(t, probs)
	require.Equal(t, l, parsed)
	require.Equal(t, a+"  1.sql\n"+c+"  2.sql\n", l.Format())
}

func TestParseLockRejectsMalformedLines(t *testing.T) {
	t.Parallel()
	_, probs := ParseLock("abc  1.sql\n")
	require.Len(t, probs, 1)
	require.Contains(t, probs[0].String(), "migrations.sha256:1: not a sha256sum line")
}
