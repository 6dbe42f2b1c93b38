package httpapi_test

import (
	"testing"

	"bothy/server/internal/platform/pg/pgtest"
)

// TestMain starts the PostgreSQL cluster of this test binary.
func TestMain(m *testing.M) { pgtest.Main(m) }
