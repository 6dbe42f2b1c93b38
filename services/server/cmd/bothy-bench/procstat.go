package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ticksPerSecond is USER_HZ, the unit of the times in /proc/<pid>/stat:
// 100 on every Linux ABI (proc(5)), whatever the kernel's own tick rate.
const ticksPerSecond = 100

// procStat is what the benchmark reads of one /proc/<pid>/stat line.
type procStat struct {
	PID, PPID int
	// Self is utime plus stime in ticks: CPU the process used itself.
	Self uint64
	// Children is cutime plus cstime in ticks: CPU of its children that
	// exited and that it waited for (the postmaster reaps its backends,
	// so the time of a closed connection lands here).
	Children uint64
}

// parseStat parses one /proc/<pid>/stat line. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses, so the
// fields are counted from the last ")". It fails when a field is missing
// or not a number.
func parseStat(line string) (procStat, error) {
	open := strings.IndexByte(line, '(')
	closing := strings.LastIndexByte(line, ')')
	if open < 1 || closing < open {
		return procStat{}, errors.New("stat: no command name")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return procStat{}, fmt.Errorf("stat: pid: %w", err)
	}
	// rest[0] is field 3 (state); field n is rest[n-3].
	rest := strings.Fields(line[closing+1:])
	if len(rest) < 15 {
		return procStat{}, errors.New("stat: too few fields")
	}
	var nums [5]uint64 // ppid, utime, stime, cutime, cstime
	for i, field := range []int{4, 14, 15, 16, 17} {
		v, err := strconv.ParseUint(rest[field-3], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("stat: field %d: %w", field, err)
		}
		nums[i] = v
	}
	return procStat{PID: pid, PPID: int(nums[0]), Self: nums[1] + nums[2], Children: nums[3] + nums[4]}, nil
}

// clusterTicks returns the CPU ticks of a PostgreSQL cluster: the
// postmaster's own and reaped children's, plus every living child's own
// and reaped children's. Processes that are not the postmaster or its
// children do not count; an unknown postmaster gives 0.
func clusterTicks(stats []procStat, postmaster int) uint64 {
	var total uint64
	for _, s := range stats {
		if s.PID == postmaster || s.PPID == postmaster {
			total += s.Self + s.Children
		}
	}
	return total
}

// clusterChildren returns the CPU ticks each living child of the
// postmaster used itself, by PID: a backend's own time, which
// sessionTicks gives to the application of its session.
func clusterChildren(stats []procStat, postmaster int) map[int]uint64 {
	out := map[int]uint64{}
	for _, s := range stats {
		if s.PPID == postmaster {
			out[s.PID] = s.Self
		}
	}
	return out
}

// sessionTicks returns the CPU ticks the backends used between two
// snapshots of clusterChildren, before and after, summed by the
// application_name of their sessions (names, by PID, from
// pg_stat_activity after): a backend opened meanwhile counts from 0; one
// closed meanwhile, or a child without a session (a background process),
// counts for no name, so the cluster's total minus the names' is the
// rest.
func sessionTicks(before, after map[int]uint64, names map[int]string) map[string]uint64 {
	out := map[string]uint64{}
	for pid, name := range names {
		end, alive := after[pid]
		if !alive {
			continue
		}
		start := before[pid]
		if start > end {
			// The PID was reused by a new backend.
			start = 0
		}
		out[name] += end - start
	}
	return out
}

// machineTicks is the time of all the machine's cores in ticks, from the
// "cpu" line of /proc/stat (proc(5)): Busy running anything (user, nice,
// system, irq, softirq; the guest times are inside user and nice), Idle
// with nothing to run (idle, iowait), and Steal, the time the hypervisor
// gave the cores to other guests while this machine had work for them.
// Stolen time slows every process of the machine alike, and a latency
// measured while it is high is the hypervisor's (D-BE-17).
type machineTicks struct {
	Busy, Idle, Steal uint64
}

// total returns all the cores' time of m.
func (m machineTicks) total() uint64 {
	return m.Busy + m.Idle + m.Steal
}

// since returns the cores' time from before to m; zero when either
// reading failed (zero) or before is not earlier.
func (m machineTicks) since(before machineTicks) machineTicks {
	if before.total() == 0 || m.total() == 0 ||
		m.Busy < before.Busy || m.Idle < before.Idle || m.Steal < before.Steal {
		return machineTicks{}
	}
	return machineTicks{Busy: m.Busy - before.Busy, Idle: m.Idle - before.Idle, Steal: m.Steal - before.Steal}
}

// parseMachineStat parses the "cpu" line, all cores together, of the
// contents of /proc/stat. It fails without the line or with fewer than
// its first eight times (user to steal) as numbers.
func parseMachineStat(stat string) (machineTicks, error) {
	fields, found := lineFields(stat, "cpu ")
	if !found {
		return machineTicks{}, errors.New("stat: no cpu line")
	}
	if len(fields) < 8 {
		return machineTicks{}, errors.New("stat: the cpu line has too few fields")
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(fields[i], 10, 64)
		if err != nil {
			return machineTicks{}, fmt.Errorf("stat: cpu field %d: %w", i+1, err)
		}
		v[i] = n
	}
	user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	return machineTicks{Busy: user + nice + system + irq + softirq, Idle: idle + iowait, Steal: steal}, nil
}

// lineFields returns the fields after prefix of the first line of text
// that starts with it, and false when no line does.
func lineFields(text, prefix string) ([]string, bool) {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return strings.Fields(rest), true
		}
	}
	return nil, false
}

// readMachine reads the time of all the machine's cores so far.
func readMachine() (machineTicks, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineTicks{}, err
	}
	return parseMachineStat(string(raw))
}

// parseHighWater returns VmHWM (the peak resident set) of a
// /proc/<pid>/status text in bytes. It fails when the line is missing.
func parseHighWater(status string) (uint64, error) {
	f, found := lineFields(status, "VmHWM:")
	if !found {
		return 0, errors.New("status: no VmHWM line")
	}
	if len(f) != 2 || f[1] != "kB" {
		return 0, errors.New("status: VmHWM is not in kB")
	}
	kb, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("status: VmHWM: %w", err)
	}
	return kb * 1024, nil
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procStat, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(raw))
}

// readHighWater reads the peak resident set of pid in bytes.
func readHighWater(pid int) (uint64, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	return parseHighWater(string(raw))
}

// readAllStats reads the stat line of every process in /proc; processes
// that end while it reads are left out.
func readAllStats() ([]procStat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, err := readStat(pid); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// readPostmasterPID reads the postmaster's PID, the first line of
// postmaster.pid in the data directory.
func readPostmasterPID(dataDir string) (int, error) {
	f, err := os.Open(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, errors.New("postmaster.pid is empty")
	}
	return strconv.Atoi(strings.TrimSpace(sc.Text()))
}

// ticksToDuration converts /proc ticks to a duration.
func ticksToDuration(ticks uint64) time.Duration {
	return time.Duration(ticks) * time.Second / ticksPerSecond
}
