package topology

import (
	"errors"
	"fmt"
	"math"

	"github.com/prometheus/procfs"
)

// ProcCPU is a server process's CPU time as the kernel counts it: user +
// system time of every thread (/proc/<pid>/stat utime + stime, in clock
// ticks of 10 ms), read by CPU.
type ProcCPU struct {
	// Pid and Start (the process's start time, clock ticks after boot)
	// name the process: two reads are of one process when both match.
	Pid   int
	Start uint64
	// MS is its CPU time so far, ms.
	MS float64
}

// ErrNoProcess is wrapped by CPU when the server has no process to read
// (never started, or exited).
var ErrNoProcess = errors.New("no server process")

// CPU reads the current server process's CPU time (github.com/prometheus/procfs).
// Errors: ErrNoProcess, or /proc unreadable (not Linux).
func (s *Server) CPU() (ProcCPU, error) {
	s.mu.Lock()
	pid, exited := s.Pid, s.exited
	s.mu.Unlock()
	if pid <= 0 {
		return ProcCPU{}, ErrNoProcess
	}
	select {
	case <-exited:
		return ProcCPU{}, fmt.Errorf("%w: pid %d exited", ErrNoProcess, pid)
	default:
	}
	p, err := procfs.NewProc(pid)
	if err != nil {
		return ProcCPU{}, fmt.Errorf("topology: read the CPU time of pid %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return ProcCPU{}, fmt.Errorf("topology: read the CPU time of pid %d: %w", pid, err)
	}
	// CPUTime is in s, of whole ticks: rounded to the µs, the ms carry no
	// binary fraction's noise.
	return ProcCPU{Pid: pid, Start: st.Starttime, MS: math.Round(st.CPUTime()*1e6) / 1e3}, nil
}

// Since is the CPU time, ms, the process spent from before to p; false
// when the two reads are not of one process (the server was restarted in
// between).
func (p ProcCPU) Since(before ProcCPU) (float64, bool) {
	if p.Pid == 0 || p.Pid != before.Pid || p.Start != before.Start || p.MS < before.MS {
		return 0, false
	}
	return p.MS - before.MS, true
}
