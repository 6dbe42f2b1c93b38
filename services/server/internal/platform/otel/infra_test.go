package otel_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/otel/oteltest"
)

// Paths of the example dashboard and alert rules (signals.md 6.4).
const (
	dashboardPath = "infra/grafana/bothy-dashboard.json"
	alertsPath    = "infra/prometheus/bothy-alerts.yaml"
)

// promFunctions are the PromQL functions and keywords the example files
// may use; any other identifier in an expression must be a metric.
var promFunctions = []string{
	"sum", "max", "min", "avg", "count", "rate", "increase", "delta", "deriv",
	"histogram_quantile", "min_over_time", "max_over_time", "absent",
	"and", "or", "unless", "bool", "offset",
}

var (
	stringLiteral  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	grouping       = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	selector       = regexp.MustCompile(`\{([^}]*)\}`)
	rangeSelector  = regexp.MustCompile(`\[[^\]]*\]`)
	variable       = regexp.MustCompile(`\$\{?\w+\}?`)
	identifier     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	matcherLabel   = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	functionCalled = regexp.MustCompile(`^\s*\(`)
)

// exprParts are the metric names, label names and functions of a PromQL
// expression, read lexically (the example files use no string functions or
// label values that look like metrics).
type exprParts struct {
	metrics, labels, functions []string
}

func parseExpr(expr string) exprParts {
	var p exprParts
	// Label matchers keep their label names; the values are strings.
	for _, m := range selector.FindAllStringSubmatch(expr, -1) {
		for _, l := range matcherLabel.FindAllStringSubmatch(m[1], -1) {
			p.labels = append(p.labels, l[1])
		}
	}
	rest := selector.ReplaceAllString(stringLiteral.ReplaceAllString(expr, `""`), " ")
	for _, m := range grouping.FindAllStringSubmatch(rest, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				p.labels = append(p.labels, l)
			}
		}
	}
	rest = grouping.ReplaceAllString(rest, " ")
	rest = variable.ReplaceAllString(rangeSelector.ReplaceAllString(rest, " "), " ")
	for _, loc := range identifier.FindAllStringIndex(rest, -1) {
		word := rest[loc[0]:loc[1]]
		if slices.Contains(promFunctions, word) || functionCalled.MatchString(rest[loc[1]:]) {
			p.functions = append(p.functions, word)
			continue
		}
		p.metrics = append(p.metrics, word)
	}
	return p
}

// listedSeries returns every Prometheus series name of signals.md 6.2.
func listedSeries(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, m := range oteltest.ListedMetrics(t) {
		out = append(out, m.PrometheusNames()...)
	}
	return out
}

// metricLabels are the label names a metric may carry: the metric keys of
// package attr as Prometheus writes them, and le of histogram buckets.
func metricLabels() []string {
	out := []string{"le"}
	for _, k := range attr.All() {
		if attr.ForMetrics(k) {
			out = append(out, strings.ReplaceAll(string(k), ".", "_"))
		}
	}
	return out
}

// dashboardExprs returns the expressions of every panel target by the
// panel's title and the target's refId.
func dashboardExprs(t *testing.T, root string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, dashboardPath))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	out := map[string]string{}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, "panel %q queries something", p.Title)
		for _, tg := range p.Targets {
			out["panel "+strconv.Quote(p.Title)+" target "+tg.RefID] = tg.Expr
		}
	}
	return out
}

// alertRule is one rule of the alert file.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func alertRules(t *testing.T, root string) []alertRule {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, alertsPath))
	require.NoError(t, err)
	var file struct {
		Groups []struct {
			Name  string      `yaml:"name"`
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &file))
	var out []alertRule
	for _, g := range file.Groups {
		require.NotEmpty(t, g.Name)
		out = append(out, g.Rules...)
	}
	require.NotEmpty(t, out)
	return out
}

// documentedAlerts returns the alert names of the table of signals.md 6.4
// and the alert column of 6.2.
func documentedAlerts(t *testing.T, root string) (table, column []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "docs", "observability", "signals.md"))
	require.NoError(t, err)
	text := string(raw)
	_, list, ok := strings.Cut(text, "\n### 6.2 Metric list\n")
	require.True(t, ok)
	list, _, _ = strings.Cut(list, "\n### ")
	for _, line := range strings.Split(list, "\n") {
		cells := strings.Split(line, "|")
		if strings.HasPrefix(line, "| `") && len(cells) == 9 {
			column = append(column, strings.TrimSpace(cells[6]))
		}
	}
	_, alerts, ok := strings.Cut(text, "\n### 6.4 Dashboard and alert rules\n")
	require.True(t, ok, "signals.md has the section 6.4")
	alerts, _, _ = strings.Cut(alerts, "\n## ")
	for _, line := range strings.Split(alerts, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > 2 && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| alert") && !strings.HasPrefix(line, "|---") {
			table = append(table, strings.TrimSpace(cells[1]))
		}
	}
	require.NotEmpty(t, table)
	return table, column
}

// requireKnown checks one expression against the metric list and the
// metric labels.
func requireKnown(t *testing.T, where, expr string, series, labels []string) {
	t.Helper()
	require.NotEmpty(t, strings.TrimSpace(expr), "%s has an expression", where)
	require.Equal(t, strings.Count(expr, "("), strings.Count(expr, ")"), "%s: parentheses balance in %q", where, expr)
	p := parseExpr(expr)
	require.NotEmpty(t, p.metrics, "%s names a metric: %q", where, expr)
	for _, m := range p.metrics {
		require.Contains(t, series, m, "%s names %s, which signals.md 6.2 does not list", where, m)
	}
	for _, l := range p.labels {
		require.Contains(t, labels, l, "%s uses label %s, which no metric carries", where, l)
	}
	for _, f := range p.functions {
		require.Contains(t, promFunctions, f, "%s calls %s", where, f)
	}
}

// TestInfraRulesNameOnlyListedMetrics (issue 13 item 2): every expression
// of the example Grafana dashboard and of the Prometheus alert rules names
// only metrics of signals.md 6.2 (which TestSignalsListEveryRegisteredMetric
// keeps equal to what the server registers) and only labels those metrics
// carry; the dashboard shows every listed metric; the rule file has
// exactly the alerts signals.md 6.4 documents, each with a severity and a
// summary; and every alert the metric list names exists.
func TestInfraRulesNameOnlyListedMetrics(t *testing.T) {
	t.Parallel()
	root := oteltest.RepoRoot(t)
	series, labels := listedSeries(t), metricLabels()

	used := map[string]bool{}
	for where, expr := range dashboardExprs(t, root) {
		requireKnown(t, where, expr, series, labels)
		for _, m := range parseExpr(expr).metrics {
			used[m] = true
		}
	}
	for _, m := range oteltest.ListedMetrics(t) {
		shown := false
		for _, name := range m.PrometheusNames() {
			shown = shown || used[name]
		}
		require.True(t, shown, "the dashboard shows %s", m.Name)
	}

	var names []string
	for _, r := range alertRules(t, root) {
		requireKnown(t, "alert "+r.Alert, r.Expr, series, labels)
		require.NotEmpty(t, r.Labels["severity"], "alert %s has a severity", r.Alert)
		require.NotEmpty(t, r.Annotations["summary"], "alert %s has a summary", r.Alert)
		if !slices.Contains(names, r.Alert) {
			names = append(names, r.Alert)
		}
	}
	table, column := documentedAlerts(t, root)
	require.ElementsMatch(t, table, names, "signals.md 6.4 documents exactly the alerts of %s", alertsPath)
	for _, a := range column {
		if a != "dashboard" {
			require.Contains(t, names, a, "the alert %s of signals.md 6.2 exists", a)
		}
	}
}

// TestParseExprSeparatesMetricsLabelsAndFunctions pins the lexical reading
// the infra test relies on.
func TestParseExprSeparatesMetricsLabelsAndFunctions(t *testing.T) {
	t.Parallel()
	p := parseExpr(`histogram_quantile(0.95, sum by (le, http_route) (rate(http_server_request_duration_seconds_bucket{http_response_status_code=~"5..",bothy_reason!="not_authorized"}[$__rate_interval]))) > max(bothy_x)`)
	require.Equal(t, []string{"http_server_request_duration_seconds_bucket", "bothy_x"}, p.metrics)
	require.ElementsMatch(t, []string{"http_response_status_code", "bothy_reason", "le", "http_route"}, p.labels)
	require.Equal(t, []string{"histogram_quantile", "sum", "rate", "max"}, p.functions)
}
