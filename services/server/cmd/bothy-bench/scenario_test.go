package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// defaults are the counts of the flags' defaults (issue 11, item 4).
var defaults = counts{Apps: 100, Fleet: 20000, FanOut: 2000, Hot: 5000, Rate: 200, RateDuration: time.Minute,
	Backlog: 20000, TwoWorkers: 20000, Hang: 20000, Scale: 1}

func TestScenariosHaveTheShapesOfTheIssue(t *testing.T) {
	t.Parallel()
	byName := map[string]shape{}
	for _, s := range defaults.scenarios() {
		byName[s.Name] = s
	}
	require.Equal(t, []string{"fleet", "hang", "fan-out", "hot", "rate", "backlog", "two-workers"}, scenarioNames(),
		"hang runs right after the fleet it is compared with (D-BE-10)")
	cases := []struct {
		name                               string
		apps, channels, messages, rate, ws int
		backlog                            bool
		hung                               int
	}{
		{"fleet", 100, 100, 20000, 0, 1, false, -1},
		{"fan-out", 100, 1, 2000, 0, 1, false, -1},
		{"hot", 1, 1, 5000, 0, 1, false, -1},
		{"rate", 100, 100, 12000, 200, 1, false, -1},
		{"backlog", 100, 100, 20000, 0, 1, true, -1},
		{"two-workers", 100, 100, 20000, 0, 2, false, -1},
		{"hang", 100, 100, 20000, 0, 1, false, 0},
	}
	for _, c := range cases {
		s := byName[c.name]
		require.Equal(t, c.apps, s.Apps, c.name)
		require.Equal(t, c.channels, s.Channels, c.name)
		require.Equal(t, c.messages, s.Messages, c.name)
		require.Equal(t, c.rate, s.Rate, c.name)
		require.Equal(t, c.ws, s.Workers, c.name)
		require.Equal(t, c.backlog, s.Backlog, c.name)
		require.Equal(t, c.hung, s.Hung, c.name)
		require.NotEmpty(t, s.describe(), c.name)
	}
}

func TestSubscribersLeaveTheHungAppOut(t *testing.T) {
	t.Parallel()
	byName := map[string]shape{}
	for _, s := range defaults.scenarios() {
		byName[s.Name] = s
	}
	require.Equal(t, 1, byName["fleet"].subscribers(0))
	require.Equal(t, 0, byName["hang"].subscribers(0), "app 0 hangs: no delivery on its channel is expected")
	require.Equal(t, 1, byName["hang"].subscribers(1))
	require.Equal(t, 100, byName["fan-out"].subscribers(0))
}

func TestScaleRunsEverythingSmallButNeverEmpty(t *testing.T) {
	t.Parallel()
	small := defaults
	small.Scale = 0.01
	got := map[string]int{}
	for _, s := range small.scenarios() {
		got[s.Name] = s.Messages
	}
	require.Equal(t, map[string]int{"fleet": 200, "fan-out": 20, "hot": 50, "rate": 120, "backlog": 200, "two-workers": 200, "hang": 200}, got)
	require.Equal(t, 1, scaled(3, 0.01), "a scaled count is at least 1")
}

func TestParseOptionsTakesTheScaleFromTheEnvironmentUnlessAFlagGivesIt(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == ScaleEnv {
				return v
			}
			return ""
		}
	}
	base := []string{"-admin-url-file", "a", "-pg-data", "d"}
	o, err := parseOptions(base, env("0.01"), io.Discard)
	require.NoError(t, err)
	require.InDelta(t, 0.01, o.counts.Scale, 1e-12)
	require.Equal(t, 30*24*time.Hour, o.logAge, "a month of event log by default (D-BE-11)")
	require.Zero(t, o.receiverDelay, "the receiver answers at once by default")
	o, err = parseOptions(append(base, "-scale", "0.5"), env("0.01"), io.Discard)
	require.NoError(t, err)
	require.InDelta(t, 0.5, o.counts.Scale, 1e-12)
	for _, bad := range [][]string{
		{"-scale", "0"}, {"-scale", "x"}, {"-scenarios", "fleet,nope"}, {"-posters", "0"}, {"-apps", "1"}, {"extra"},
		{"-top-statements", "-1"}, {"-query-width", "5"}, {"-warm-wal-segments", "-1"}, {"-log-age", "-1h"}, {"-log-events-per-day", "0"}, {"-receiver-delay", "-1ms"},
	} {
		_, err := parseOptions(append(append([]string(nil), base...), bad...), env(""), io.Discard)
		require.Error(t, err, bad)
	}
	_, err = parseOptions(nil, env(""), io.Discard)
	require.Error(t, err, "the cluster's files are required")
}

func TestParseOptionsTakesTwoSidesForPairs(t *testing.T) {
	t.Parallel()
	base := []string{"-admin-url-file", "a", "-pg-data", "d", "-bothy", "bin/bothy"}
	o, err := parseOptions(base, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []side{{Bothy: "bin/bothy"}}, o.sides(), "one side without -pairs, as before")

	o, err = parseOptions(append(base, "-pairs", "2", "-bothy-b", "/tmp/bothy-new",
		"-env-b", "BOTHY_CONSUMER_GATHER_PAUSE=50ms", "-env-b", "BOTHY_WEBHOOK_ALLOWED_HOSTS=a.example.com,b.example.com",
		"-env-a", "BOTHY_PROCESS_MAX_PROCS=1"), func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 2, o.pairs)
	require.Equal(t, []side{
		{Name: "A", Bothy: "bin/bothy", Env: []string{"BOTHY_PROCESS_MAX_PROCS=1"}},
		{Name: "B", Bothy: "/tmp/bothy-new", Env: []string{"BOTHY_CONSUMER_GATHER_PAUSE=50ms", "BOTHY_WEBHOOK_ALLOWED_HOSTS=a.example.com,b.example.com"}},
	}, o.sides(), "a value may hold commas")

	o, err = parseOptions(append(base, "-pairs", "1", "-env-b", "BOTHY_CONSUMER_GATHER_PAUSE=0s"), func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "bin/bothy", o.sides()[1].Bothy, "side B runs -bothy unless -bothy-b names another")

	for _, bad := range [][]string{
		{"-pairs", "-1"}, {"-bothy-b", "/tmp/x"}, {"-env-b", "BOTHY_A=1"}, {"-env-a", "BOTHY_A=1"},
		{"-pairs", "1", "-env-b", "PATH=/tmp"}, {"-pairs", "1", "-env-b", "BOTHY_A"}, {"-pairs", "1", "-env-b", "=1"},
	} {
		_, err := parseOptions(append(append([]string(nil), base...), bad...), func(string) string { return "" }, io.Discard)
		require.Error(t, err, bad)
	}
}

func TestPairOrderAlternatesWhichSideGoesFirst(t *testing.T) {
	t.Parallel()
	a, b := side{Name: "A"}, side{Name: "B"}
	require.Equal(t, []side{a, b}, pairOrder([]side{a, b}, 0), "A first in the first pair")
	require.Equal(t, []side{b, a}, pairOrder([]side{a, b}, 1), "B first in the second")
	require.Equal(t, []side{a, b}, pairOrder([]side{a, b}, 2))
	require.Equal(t, []side{a}, pairOrder([]side{a}, 1), "one side runs alone")
}
