package robustness

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestClockStepOverlay builds a probe with the suite's clock-step
// overlay and steps its clock back and forth: time.Now's wall reading
// moves by the step against the kernel's clock, and its monotonic
// reading does not (a step applied to it would show in time.Since).
func TestClockStepOverlay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with a patched package time")
	}
	t.Parallel()
	dir := t.TempDir()
	overlay, err := clockStepOverlay(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(dir, "clockprobe")
	build := exec.Command("go", "build", "-overlay", overlay, "-o", bin, "./testdata/clockprobe")
	build.Dir = filepath.Dir(file)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the probe with the overlay: %v\n%s", err, out)
	}
	stepFile := filepath.Join(dir, "step")
	probe := exec.Command(bin)
	probe.Env = append(probe.Environ(), clockStepEnv+"="+stepFile)
	stdin, err := probe.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := probe.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = probe.Wait() })
	lines := bufio.NewScanner(stdout)
	read := func() (offset, sinceMs int64) {
		if !lines.Scan() {
			t.Fatalf("the probe stopped: %v", lines.Err())
		}
		if _, err := fmt.Sscan(lines.Text(), &offset, &sinceMs); err != nil {
			t.Fatalf("probe said %q: %v", lines.Text(), err)
		}
		return offset, sinceMs
	}
	next := func() {
		if _, err := io.WriteString(stdin, "next\n"); err != nil {
			t.Fatal(err)
		}
	}
	if off, _ := read(); off != 0 {
		t.Fatalf("without a step file the probe's clock is %d s off", off)
	}
	for _, step := range []int{-300, 420, 0} {
		if err := setClockStep(stepFile, step); err != nil {
			t.Fatal(err)
		}
		var off, since int64
		for deadline := time.Now().Add(30 * time.Second); ; {
			next()
			if off, since = read(); off == int64(step) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the probe's clock is %d s off, want %d", off, step)
			}
		}
		if since < 0 || since > 60_000 {
			t.Errorf("after a step of %d s the probe's monotonic clock says %d ms since it started", step, since)
		}
	}
}
