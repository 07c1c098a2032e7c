// This file is added to package time of the fault-injection suite's
// agent build (go build -overlay, see e2e/robustness/clockstep_test.go);
// it is never part of a product build. Now adds to its wall reading the
// offset, in seconds, written in the file STRATUS_CLOCK_STEP_FILE names,
// as a step of the system clock would move it. The monotonic reading,
// which timers, time.Since and time.Sub use, is left alone, as a real
// step leaves it.
//
// Now also runs on the system stack (a timer's channel send), where a
// system call or a race-detector hook is fatal, so it only loads the
// offset with the runtime's own (uninstrumented) atomics; a goroutine
// started at init re-reads the file every 50 ms.

package time

import (
	"internal/runtime/atomic"
	"syscall"
)

var (
	clockStepFile, _ = syscall.Getenv("STRATUS_CLOCK_STEP_FILE")
	clockStepNanos   uint64 // int64 nanoseconds, read and written atomically
)

func init() {
	if clockStepFile == "" {
		return
	}
	atomic.Store64(&clockStepNanos, uint64(readClockStep()))
	go func() {
		for {
			Sleep(50 * Millisecond)
			atomic.Store64(&clockStepNanos, uint64(readClockStep()))
		}
	}()
}

// clockStep moves a wall reading by the current step.
func clockStep(sec int64, nsec int32) (int64, int32) {
	off := int64(atomic.Load64(&clockStepNanos))
	if off == 0 {
		return sec, nsec
	}
	ns := int64(nsec) + off%1e9
	sec += off/1e9 + ns/1e9
	ns %= 1e9
	if ns < 0 {
		ns += 1e9
		sec--
	}
	return sec, int32(ns)
}

// readClockStep reads the offset file: an optional minus sign and
// decimal seconds. A missing or unreadable file is no step.
func readClockStep() int64 {
	fd, err := syscall.Open(clockStepFile, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer syscall.Close(fd)
	var buf [32]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return 0
	}
	var v int64
	neg := false
	for i, c := range buf[:n] {
		if c == '-' && i == 0 {
			neg = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v * 1e9
}
