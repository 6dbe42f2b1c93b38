package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"bothy/server/cmd/internal/localrun"
	"bothy/server/internal/platform/config"
)

// stopWait bounds the wait for a bothy process to end after SIGTERM; the
// benchmark's configuration sets http.shutdown_timeout and
// jobs.shutdown_timeout well below it. After it the process is killed.
const stopWait = 20 * time.Second

// readyWait bounds the wait for a started process to answer /readyz.
const readyWait = 30 * time.Second

// bothyProc is one `bothy serve --role R` process the benchmark started.
type bothyProc struct {
	role     string
	cmd      *exec.Cmd
	done     chan struct{}
	err      error
	logPath  string
	operator *localrun.Client // its operator listener (/readyz)
	// apiAddr is its public API listener (role api only serves it).
	apiAddr string
}

// startBothy runs `bothy serve --role role --config configFile` with the
// environment environ plus the two listen addresses it gets here (free
// loopback ports), its standard error into a log file in dir, and waits
// until its operator listener answers /readyz. The process gets SIGKILL
// when the benchmark dies (Pdeathsig), so none outlives it.
func startBothy(ctx context.Context, bin, configFile, dir, role string, environ []string) (*bothyProc, error) {
	addrs, err := localrun.FreeLoopbackAddresses(2)
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp(dir, "bothy-"+role+"-*.log")
	if err != nil {
		return nil, fmt.Errorf("creating the log of the %s process: %w", role, err)
	}
	// bin is the operator's own -bothy flag (make bench-e2e: bin/bothy).
	cmd := exec.Command(bin, "serve", "--role", role, "--config", configFile) //nolint:gosec // the binary under test, named by the caller

	cmd.Env = append(append([]string(nil), environ...),
		config.EnvName("http.listen_address")+"="+addrs[0],
		config.EnvName("http.operator_listen_address")+"="+addrs[1],
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting bothy serve --role %s: %w", role, err)
	}
	p := &bothyProc{role: role, cmd: cmd, done: make(chan struct{}), logPath: logFile.Name(),
		operator: localrun.NewClient(addrs[1], 2)}
	go func() {
		defer close(p.done)
		p.err = cmd.Wait()
		_ = logFile.Close()
	}()
	if err := p.waitReady(ctx); err != nil {
		_ = p.stop() // the readiness error says more
		return nil, err
	}
	p.apiAddr = addrs[0]
	return p, nil
}

// waitReady polls the operator listener's /readyz until it answers 200,
// the process ends, or readyWait (or ctx) runs out.
func (p *bothyProc) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	for {
		if p.operator.Ready(ctx) {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("bothy serve --role %s ended before it was ready (%v); its log: %s", p.role, p.err, p.logPath)
		case <-ctx.Done():
			return fmt.Errorf("bothy serve --role %s was not ready in time; its log: %s", p.role, p.logPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// alive returns an error once the process has ended: it must run until
// stop.
func (p *bothyProc) alive() error {
	select {
	case <-p.done:
		return fmt.Errorf("bothy serve --role %s ended early (%v); its log: %s", p.role, p.err, p.logPath)
	default:
		return nil
	}
}

// cpu returns the CPU ticks the process has used so far (0 once it has
// ended).
func (p *bothyProc) cpu() uint64 {
	s, err := readStat(p.cmd.Process.Pid)
	if err != nil {
		return 0
	}
	return s.Self + s.Children
}

// highWater returns the peak resident set of the process in bytes (0 once
// it has ended).
func (p *bothyProc) highWater() uint64 {
	v, err := readHighWater(p.cmd.Process.Pid)
	if err != nil {
		return 0
	}
	return v
}

// stop sends SIGTERM and waits up to stopWait for the process to end, then
// kills it. It returns an error when the process had to be killed.
func (p *bothyProc) stop() error {
	p.operator.Close()
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopWait):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("bothy serve --role " + p.role + " did not stop in time and was killed; its log: " + filepath.Base(p.logPath))
	}
}
