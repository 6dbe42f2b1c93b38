package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteStatementsListsAsManyAsAskedEachCutToTheWidth(t *testing.T) {
	stmts := []statement{
		{Query: "SELECT a, b, c FROM webhook_deliveries WHERE subscription_id = $1", Calls: 20, TotalMS: 4},
		{Query: "INSERT INTO messages (id) VALUES ($1)", Calls: 10, TotalMS: 2},
		{Query: "COMMIT", Calls: 10, TotalMS: 1},
	}
	var b strings.Builder
	writeStatements(&b, stmts, 10, 2, 30)
	out := b.String()
	require.Contains(t, out, "4.0 per delivery", "the totals count every statement")
	require.Contains(t, out, "SELECT a, b, c FROM webhook...", "a long text is cut to the width")
	require.Contains(t, out, "INSERT INTO messages (id) V...")
	require.NotContains(t, out, "COMMIT", "only the first two are listed")

	b.Reset()
	writeStatements(&b, stmts, 10, 0, 30)
	require.Contains(t, b.String(), "4.0 per delivery")
	require.NotContains(t, b.String(), "top statements", "0 lists none")
}
