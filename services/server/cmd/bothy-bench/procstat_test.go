package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseStatReadsTimesAfterACommandWithSpacesAndParentheses(t *testing.T) {
	t.Parallel()
	// Fields 14 to 17 (utime, stime, cutime, cstime) are 150, 50, 7 and 3
	// ticks; the command name holds ") (" as a hostile one may.
	line := "4242 (postgres: a) (b) S 17 4242 4242 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 1 0 999 1000 200 18446744073709551615"
	st, err := parseStat(line)
	require.NoError(t, err)
	require.Equal(t, 4242, st.PID)
	require.Equal(t, 17, st.PPID)
	require.Equal(t, uint64(200), st.Self)
	require.Equal(t, uint64(10), st.Children)
}

func TestParseStatRefusesMalformedLines(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"",
		"12 (x S 1",
		"12 (x) S 1 2 3",
		"x (y) S 1 1 1 0 -1 0 0 0 0 0 1 1 1 1",
		"12 (y) S 1 1 1 0 -1 0 0 0 0 0 a 1 1 1",
	} {
		_, err := parseStat(line)
		require.Error(t, err, line)
	}
}

func TestParseMachineStatSplitsTheCoresTimeIntoBusyIdleAndStolen(t *testing.T) {
	t.Parallel()
	// user nice system idle iowait irq softirq steal guest guest_nice; the
	// guest times are already in user and nice (proc(5)).
	stat := "cpu  700 10 200 900 100 5 15 300 40 0\ncpu0 350 5 100 450 50 2 8 150 20 0\nintr 1 2 3\n"
	got, err := parseMachineStat(stat)
	require.NoError(t, err)
	require.Equal(t, machineTicks{Busy: 930, Idle: 1000, Steal: 300}, got)

	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8\n", "cpu  1 2 3 4 5 6 7\n", "cpu  1 2 3 x 5 6 7 8\n"} {
		_, err := parseMachineStat(bad)
		require.Error(t, err, bad)
	}
}

func TestMachineTicksSinceIsZeroWithoutTwoReadings(t *testing.T) {
	t.Parallel()
	before, after := machineTicks{Busy: 10, Idle: 20, Steal: 1}, machineTicks{Busy: 40, Idle: 25, Steal: 6}
	require.Equal(t, machineTicks{Busy: 30, Idle: 5, Steal: 5}, after.since(before))
	require.Zero(t, after.since(machineTicks{}), "the first reading failed")
	require.Zero(t, machineTicks{}.since(before), "the second reading failed")
	require.Zero(t, before.since(after), "not earlier")
}

func TestParseHighWaterReadsVmHWMInBytes(t *testing.T) {
	t.Parallel()
	status := "Name:\tbothy\nVmPeak:\t  900000 kB\nVmHWM:\t   81234 kB\nVmRSS:\t   80000 kB\n"
	got, err := parseHighWater(status)
	require.NoError(t, err)
	require.Equal(t, uint64(81234*1024), got)
	_, err = parseHighWater("Name:\tbothy\n")
	require.Error(t, err)
}

func TestClusterCPUAddsThePostmasterAndItsChildrenOnly(t *testing.T) {
	t.Parallel()
	stats := []procStat{
		{PID: 100, PPID: 1, Self: 10, Children: 5}, // the postmaster, with reaped backends
		{PID: 101, PPID: 100, Self: 20, Children: 0},
		{PID: 102, PPID: 100, Self: 30, Children: 1},
		{PID: 200, PPID: 1, Self: 1000, Children: 0},   // another program
		{PID: 201, PPID: 200, Self: 1000, Children: 0}, // its child
	}
	require.Equal(t, uint64(66), clusterTicks(stats, 100))
	require.Equal(t, uint64(0), clusterTicks(stats, 999))
}

func TestSessionTicksAddTheBackendsOfEachNameSinceTheStart(t *testing.T) {
	t.Parallel()
	before := map[int]uint64{101: 10, 102: 20, 103: 5, 104: 7, 107: 50}
	after := map[int]uint64{101: 15, 102: 50, 105: 4, 106: 9, 104: 8, 107: 3}
	names := map[int]string{
		101: "bothy-api",    // ran through the phase: 5
		102: "bothy-worker", // ran through the phase: 30
		105: "bothy-worker", // opened during the phase: all of its 4
		106: "psql",         // another client, under its own name: 9
		107: "bothy-api",    // a new backend under a PID used before: all of its 3
		// 103 closed during the phase: its time went to the postmaster.
		// 104 has no session (a background process): in no name's.
	}
	got := sessionTicks(before, after, names)
	require.Equal(t, map[string]uint64{"bothy-api": 8, "bothy-worker": 34, "psql": 9}, got)
}

func TestClusterChildrenAreThePostmastersLivingChildren(t *testing.T) {
	t.Parallel()
	stats := []procStat{
		{PID: 100, PPID: 1, Self: 10, Children: 5},
		{PID: 101, PPID: 100, Self: 20, Children: 3},
		{PID: 102, PPID: 100, Self: 30},
		{PID: 201, PPID: 200, Self: 1000},
	}
	require.Equal(t, map[int]uint64{101: 20, 102: 30}, clusterChildren(stats, 100))
}
