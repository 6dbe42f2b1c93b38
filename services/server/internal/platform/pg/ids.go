package pg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy/server/internal/kernel/ids"
)

// RegisterTypes teaches the type map of a connection the server's own
// types: ids.ID travels as the 16 bytes of a binary uuid, ids.Zero as NULL,
// also as an element of uuid[]. Without it pgx encodes an ID through its
// driver.Valuer (the text form, parsed back into bytes) and decodes it
// through its sql.Scanner (bytes to text and back): a few microseconds per
// value, and every delivery and posting sends and reads a dozen. The
// result is the same either way; Open and pgtest register it on every
// connection.
func RegisterTypes(m *pgtype.Map) {
	uuid := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: idCodec{}}
	m.RegisterType(uuid)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: uuid}})
}

// AfterConnect registers the server's types on each new connection
// (RegisterTypes). The tests' pools (pgtest) use it as their AfterConnect;
// Open calls it first in its own, which then warms the connection. It
// never fails.
func AfterConnect(_ context.Context, conn *pgx.Conn) error {
	RegisterTypes(conn.TypeMap())
	return nil
}

// idCodec is pgx's uuid codec with a direct path for ids.ID in the binary
// format; every other value and format goes to pgtype.UUIDCodec.
type idCodec struct{ pgtype.UUIDCodec }

// PlanEncode implements pgtype.Codec.
func (c idCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(ids.ID); ok && format == pgtype.BinaryFormatCode {
		return encodeID{}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

// PlanScan implements pgtype.Codec.
func (c idCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*ids.ID); ok && format == pgtype.BinaryFormatCode {
		return scanID{}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type encodeID struct{}

// Encode appends the ID's bytes; ids.Zero is NULL (a nil buffer), as the
// ID's driver.Valuer says.
func (encodeID) Encode(value any, buf []byte) ([]byte, error) {
	id := value.(ids.ID)
	if id.IsZero() {
		return nil, nil
	}
	return append(buf, id[:]...), nil
}

type scanID struct{}

// Scan copies a binary uuid into the ID; NULL gives ids.Zero.
func (scanID) Scan(src []byte, dst any) error {
	id := dst.(*ids.ID)
	if src == nil {
		*id = ids.Zero
		return nil
	}
	if len(src) != len(id) {
		return fmt.Errorf("pg: a binary uuid has 16 bytes, not %d", len(src))
	}
	copy(id[:], src)
	return nil
}
