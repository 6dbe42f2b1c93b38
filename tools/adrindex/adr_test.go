package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const goodADR = `---
status: accepted
date: 2026-11-30
decision-makers: Robin
---

# Record architecture decisions

## Context and Problem Statement
`

func TestParseADR(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, content string
		want                ADR
		err                 string
	}{
		{"a MADR 4 file is read", "0001-record-architecture-decisions.md", goodADR, ADR{Number: "0001", File: "0001-record-architecture-decisions.md", Title: "Record architecture decisions", Status: "accepted", Date: "2026-11-30"}, ""},
		{"a superseded status is kept", "0002-x.md", "---\nstatus: superseded by ADR-0007\ndate: \"2026-12-01\"\n---\n# X\n", ADR{Number: "0002", File: "0002-x.md", Title: "X", Status: "superseded by ADR-0007", Date: "2026-12-01"}, ""},
		{"a file name without four digits is refused", "1-x.md", goodADR, ADR{}, "NNNN-<kebab-case-title>.md"},
		{"a file without front matter is refused", "0003-x.md", "# X\n", ADR{}, "no front matter"},
		{"an unclosed front matter is refused", "0003-x.md", "---\nstatus: accepted\n# X\n", ADR{}, "no closing ---"},
		{"an unknown status is refused", "0003-x.md", "---\nstatus: done\ndate: 2026-11-30\n---\n# X\n", ADR{}, `status "done"`},
		{"a missing date is refused", "0003-x.md", "---\nstatus: accepted\n---\n# X\n", ADR{}, `date ""`},
		{"a missing title is refused", "0003-x.md", "---\nstatus: accepted\ndate: 2026-11-30\n---\n## X\n", ADR{}, "no level-one heading"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseADR(tc.file, tc.content)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	out, err := Render([]ADR{
		{Number: "0007", File: "0007-b.md", Title: "B | C", Status: "proposed", Date: "2026-12-02"},
		{Number: "0001", File: "0001-a.md", Title: "A", Status: "accepted", Date: "2026-11-30"},
	})
	require.NoError(t, err)
	require.Contains(t, out, "| [0001](0001-a.md) | A | accepted | 2026-11-30 |\n| [0007](0007-b.md) | B \\| C | proposed | 2026-12-02 |\n")
	require.Contains(t, out, "[template]("+Template+")")

	_, err = Render([]ADR{{Number: "0001", File: "0001-a.md"}, {Number: "0001", File: "0001-b.md"}})
	require.ErrorContains(t, err, "share the number 0001")
}

func TestRunWritesAndChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0001-record-architecture-decisions.md"), []byte(goodADR), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, Template), []byte("---\nstatus: \"{...}\"\n---\n# {title}\n"), 0o644))
	var out, errOut bytes.Buffer

	require.Equal(t, 1, run([]string{"-dir", dir, "-check"}, &out, &errOut), "a missing index is stale")
	require.Contains(t, errOut.String(), "is stale")

	require.Equal(t, 0, run([]string{"-dir", dir}, &out, &errOut), errOut.String())
	require.Equal(t, 0, run([]string{"-dir", dir, "-check"}, &out, &errOut), errOut.String())
	index, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(index), "| [0001](0001-record-architecture-decisions.md) | Record architecture decisions | accepted | 2026-11-30 |")
	require.NotContains(t, string(index), "[0000]", "the template is not an ADR")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "0002-second.md"), []byte("---\nstatus: proposed\ndate: 2026-12-01\n---\n# Second\n"), 0o644))
	errOut.Reset()
	require.Equal(t, 1, run([]string{"-dir", dir, "-check"}, &out, &errOut), "a new ADR makes the index stale")
	require.Contains(t, errOut.String(), "make adr-index")
}
