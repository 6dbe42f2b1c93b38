package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTablesFromTheContract(t *testing.T) {
	t.Parallel()
	spec, err := os.ReadFile("../../api/openapi.yaml")
	require.NoError(t, err)
	g, err := Tables(spec)
	require.NoError(t, err)
	require.Contains(t, g.ErrorCodes, "| `validation_failed` | 400 | `idempotency_key_invalid`, `idempotency_not_supported`, `invalid_window` | The request is malformed;")
	require.Contains(t, g.ErrorCodes, "| `conflict` | 409 | `one_time_secret`, `app_not_installed`, `event_expired`, `already_installed` |")
	require.Less(t, strings.Index(g.ErrorCodes, "`validation_failed`"), strings.Index(g.ErrorCodes, "`internal`"), "rows follow the enum order")
	require.Contains(t, g.EventTypes, "| `message.created` | `message.read` | person, app | yes |")
	require.Contains(t, g.EventTypes, "| `app.installation.updated` | `self` | app | yes |")
	require.Contains(t, g.EventTypes, "| `agent.invocation.requested` | `self` | agent | no |")
	require.Contains(t, g.EventTypes, "Not subscribable by apps:\n\n- `agent.invocation.requested`: receivers agent only.\n")
}

func TestTablesNeedTheirSources(t *testing.T) {
	t.Parallel()
	_, err := Tables([]byte("openapi: 3.0.3\npaths: {}\n"))
	require.ErrorContains(t, err, "x-problem-codes is missing")
	_, err = Tables([]byte("openapi: 3.0.3\ncomponents:\n  schemas:\n    ProblemCode:\n      x-problem-codes: {}\n"))
	require.ErrorContains(t, err, "x-webhooks is missing")
	_, err = Tables([]byte("components:\n  schemas:\n    ProblemCode:\n      x-problem-codes: {}\nx-webhooks:\n  a.b:\n    post: {operationId: x}\n"))
	require.ErrorContains(t, err, "lacks x-receivers or x-receive-action")
}

func TestSplice(t *testing.T) {
	t.Parallel()
	begin, end := markers("t")
	doc := "# Title\n\n" + begin + "\nold\n" + end + "\nafter\n"
	got, err := Splice(doc, "t", "| a |\n")
	require.NoError(t, err)
	require.Equal(t, "# Title\n\n"+begin+"\n\n| a |\n\n"+end+"\nafter\n", got)
	again, err := Splice(got, "t", "| a |\n")
	require.NoError(t, err)
	require.Equal(t, got, again, "splicing the same body twice changes nothing")

	_, err = Splice("no markers", "t", "x")
	require.Error(t, err)
	_, err = Splice(doc+begin, "t", "x")
	require.Error(t, err, "a repeated marker")
	_, err = Splice(end+"\n"+begin, "t", "x")
	require.Error(t, err, "markers in the wrong order")
}

func TestRunWritesAndCheckDetectsDrift(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	eb, ee := markers("error-codes")
	wb, we := markers("event-types")
	errorsDoc := filepath.Join(dir, "06-api.md")
	webhooksDoc := filepath.Join(dir, "webhooks.md")
	require.NoError(t, os.WriteFile(errorsDoc, []byte("# 06\n"+eb+"\n"+ee+"\n"), 0o644))
	require.NoError(t, os.WriteFile(webhooksDoc, []byte("# W\n"+wb+"\nstale\n"+we+"\n"), 0o644))
	spec := "../../api/openapi.yaml"

	err := run(spec, errorsDoc, webhooksDoc, true)
	require.ErrorContains(t, err, "out of date")
	require.NoError(t, run(spec, errorsDoc, webhooksDoc, false))
	require.NoError(t, run(spec, errorsDoc, webhooksDoc, true))
	b, err := os.ReadFile(webhooksDoc)
	require.NoError(t, err)
	require.NotContains(t, string(b), "stale")
}

// TestCommittedDocsAreCurrent is the check of make codegen-check, as a test.
func TestCommittedDocsAreCurrent(t *testing.T) {
	t.Parallel()
	require.NoError(t, run("../../api/openapi.yaml", "../../docs/spec/06-api.md", "../../docs/api/webhooks.md", true))
}
