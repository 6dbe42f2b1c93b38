package pg_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// TestIDsTravelAsBinaryUUIDs sends ids.ID values, the zero ID and arrays
// of them through a real pool and reads them back: a non-zero ID is the
// same uuid, ids.Zero is NULL both ways, and uuid[] round-trips with a
// NULL element. The pools of pg.Open and pgtest register the codec of
// pg.RegisterTypes; the values are those the ID's own text form gives.
func TestIDsTravelAsBinaryUUIDs(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	a, b := ids.New(), ids.New()

	var gotA, gotZero, fromNull ids.ID
	var text string
	var isNull bool
	var list []ids.ID
	require.NoError(t, db.App.QueryRow(ctx, `SELECT $1::uuid, $1::uuid::text, $2::uuid, $2::uuid IS NULL, $3::uuid[], NULL::uuid`,
		a, ids.Zero, []ids.ID{a, ids.Zero, b}).Scan(&gotA, &text, &gotZero, &isNull, &list, &fromNull))
	require.Equal(t, a, gotA)
	require.Equal(t, a.String(), text, "the database holds the same uuid")
	require.True(t, isNull, "ids.Zero is sent as NULL")
	require.Equal(t, ids.Zero, gotZero)
	require.Equal(t, []ids.ID{a, ids.Zero, b}, list)
	require.Equal(t, ids.Zero, fromNull, "NULL reads as ids.Zero")
}

// BenchmarkEncodeID is the cost of sending one ids.ID as a uuid parameter
// and reading one back: through the ID's driver.Valuer and sql.Scanner
// (pgx's default for the type) and through pg.RegisterTypes.
func BenchmarkEncodeID(b *testing.B) {
	plain := pgtype.NewMap()
	registered := pgtype.NewMap()
	pg.RegisterTypes(registered)
	id := ids.New()
	for _, bc := range []struct {
		name string
		m    *pgtype.Map
	}{{"valuer", plain}, {"registered", registered}} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			var back ids.ID
			for b.Loop() {
				out, err := bc.m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id, buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				if err := bc.m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, out, &back); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
