package robustness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// clockStepEnv names the file a suite-built agent reads its wall clock
// offset from (testdata/clockstep/time_clockstep.go).
const clockStepEnv = "STRATUS_CLOCK_STEP_FILE"

// timeNowAnchor is the line of time.Now after which the overlay's copy
// of time.go passes the wall reading through clockStep.
const timeNowAnchor = "\tsec, nsec, mono := runtimeNow()\n"

// clockStepOverlay writes into dir a `go build -overlay` file that adds
// testdata/clockstep/time_clockstep.go to the standard library's package
// time and replaces time.go with a copy whose Now moves its wall reading
// by the step that file reads. Linux has no per-process CLOCK_REALTIME
// (time namespaces offset only the monotonic and boot clocks) and a step
// of the system clock would hit every process on the machine, but in a
// Go program a clock step moves only the wall reading of time.Now:
// timers, time.Since and time.Sub run on the monotonic one. So the
// suite's own build of the agent is the one thing that sees a step, and
// no product code carries a fake clock.
func clockStepOverlay(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	timeDir := filepath.Join(strings.TrimSpace(string(out)), "src", "time")
	orig, err := os.ReadFile(filepath.Join(timeDir, "time.go"))
	if err != nil {
		return "", err
	}
	if bytes.Count(orig, []byte(timeNowAnchor)) != 1 {
		return "", fmt.Errorf("%s/time.go has no line %q in Now: this Go's time.Now changed; update the clock-step overlay", timeDir, timeNowAnchor)
	}
	patched := bytes.Replace(orig, []byte(timeNowAnchor), []byte(timeNowAnchor+"\tsec, nsec = clockStep(sec, nsec)\n"), 1)
	patchedPath := filepath.Join(dir, "time.go")
	if err := os.WriteFile(patchedPath, patched, 0o644); err != nil {
		return "", err
	}
	_, file, _, _ := runtime.Caller(0)
	addition := filepath.Join(filepath.Dir(file), "testdata", "clockstep", "time_clockstep.go")
	if _, err := os.Stat(addition); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(timeDir, "time_clockstep.go")); !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s/time_clockstep.go exists: the overlay would replace it", timeDir)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {
		filepath.Join(timeDir, "time.go"):           patchedPath,
		filepath.Join(timeDir, "time_clockstep.go"): addition,
	}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "clockstep-overlay.json")
	return path, os.WriteFile(path, overlay, 0o644)
}

// setClockStep steps the wall clock of the agent reading file by
// seconds (0: back to the kernel's clock). It takes effect within 50 ms.
// The file is replaced, never rewritten in place, so a reader never
// sees half of it.
func setClockStep(file string, seconds int) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n", seconds)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
