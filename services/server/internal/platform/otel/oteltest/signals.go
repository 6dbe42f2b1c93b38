package oteltest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ListedMetric is one row of the metric list of
// docs/observability/signals.md 6.2.
type ListedMetric struct {
	// Name is the OpenTelemetry name, for example bothy.job.duration.
	Name string
	// Instrument is counter, histogram, gauge or updowncounter.
	Instrument string
	// Unit is the UCUM unit, for example s or {job}.
	Unit string
}

// PrometheusNames returns the names under which the Prometheus exporter
// shows the metric (signals.md 6.1): dots become underscores, the unit s
// adds _seconds (a unit in braces adds nothing), a counter adds _total, a
// histogram is the three series _bucket, _sum and _count.
func (m ListedMetric) PrometheusNames() []string {
	base := strings.ReplaceAll(m.Name, ".", "_")
	if m.Unit == "s" {
		base += "_seconds"
	}
	switch m.Instrument {
	case "counter":
		return []string{base + "_total"}
	case "histogram":
		return []string{base + "_bucket", base + "_sum", base + "_count"}
	}
	return []string{base}
}

// RepoRoot walks up from the working directory to the folder holding
// go.work, the root of the repository.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "go.work not found above the package")
		dir = parent
	}
}

// ListedMetrics returns the rows of the table of section 6.2 of
// docs/observability/signals.md, in their order. The test fails when the
// section or a row cannot be read, or a row names an unknown instrument.
func ListedMetrics(t testing.TB) []ListedMetric {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(RepoRoot(t), "docs", "observability", "signals.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(raw), "\n### 6.2 Metric list\n")
	require.True(t, ok, "signals.md has the section 6.2 Metric list")
	section, _, _ = strings.Cut(section, "\n### ")
	var out []ListedMetric
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		instrument := strings.TrimSpace(cells[2])
		if instrument != "counter" && instrument != "histogram" && instrument != "gauge" && instrument != "updowncounter" {
			// The outcome table below the metric list.
			continue
		}
		out = append(out, ListedMetric{Name: name, Instrument: instrument, Unit: strings.Trim(strings.TrimSpace(cells[3]), "`")})
	}
	require.NotEmpty(t, out, "signals.md 6.2 lists metrics")
	return out
}
