package pg

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
)

// TestRegisterTypesTakesTheDirectPathForIDs: with RegisterTypes pgx plans
// an ID, and an ID inside a uuid[], with the codec's direct path, not with
// the ID's driver.Valuer and sql.Scanner (whose bytes on the wire are the
// same, so only the plan tells the two apart); the direct path gives the
// ID's 16 bytes, NULL for ids.Zero, and refuses a uuid of another length.
func TestRegisterTypesTakesTheDirectPathForIDs(t *testing.T) {
	t.Parallel()
	plain := pgtype.NewMap()
	require.NotEqual(t, encodeID{}, plain.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, ids.Zero), "without RegisterTypes pgx takes the Valuer")

	m := pgtype.NewMap()
	RegisterTypes(m)
	require.Equal(t, encodeID{}, m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, ids.Zero))
	var back ids.ID
	require.Equal(t, scanID{}, m.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &back))
	elem, ok := m.TypeForOID(pgtype.UUIDArrayOID)
	require.True(t, ok)
	require.EqualValues(t, pgtype.UUIDOID, elem.Codec.(*pgtype.ArrayCodec).ElementType.OID)
	require.IsType(t, idCodec{}, elem.Codec.(*pgtype.ArrayCodec).ElementType.Codec, "uuid[] elements take the same codec")

	id := ids.New()
	buf, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id, nil)
	require.NoError(t, err)
	require.Equal(t, id[:], buf)
	buf, err = m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, ids.Zero, nil)
	require.NoError(t, err)
	require.Nil(t, buf, "ids.Zero encodes as NULL")
	require.NoError(t, m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, id[:], &back))
	require.Equal(t, id, back)
	require.NoError(t, m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, nil, &back))
	require.Equal(t, ids.Zero, back)
	require.Error(t, m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, []byte{1, 2, 3}, &back), "a uuid is 16 bytes")
}
