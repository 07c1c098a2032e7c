package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestLogFileRotates: log_file gets the log as stderr does, and is
// rotated once it passes log_rotate_bytes, keeping log_rotate_max_files.
func TestLogFileRotates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := &Config{LogFile: filepath.Join(dir, "agent.log"), LogRotateBytes: 1 << 20, LogRotateMaxFiles: 2}
	f, err := cfg.OpenLogFile()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stderr bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: LogOutput(&stderr, f), Level: hclog.Info})
	line := strings.Repeat("x", 1000)
	for i := 0; i < 4000; i++ { // about 4 MB: three rotations
		logger.Info("filler", "n", i, "pad", line)
	}
	if !strings.Contains(stderr.String(), "filler") {
		t.Fatal("stderr got nothing")
	}
	// Old files are removed by lumberjack's own goroutine: wait for it.
	waitFor(t, "two rotated files kept", func() error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		if len(ents) != 3 {
			names := []string{}
			for _, e := range ents {
				names = append(names, e.Name())
			}
			return fmt.Errorf("files %v, want the log and 2 rotated ones", names)
		}
		return nil
	})
	for _, bad := range []*Config{
		{LogFile: "relative.log"},
		{LogFile: filepath.Join(dir, "x.log"), LogRotateDuration: "10s"},
		{LogFile: filepath.Join(dir, "x.log"), LogRotateDuration: "daily"},
	} {
		if _, err := bad.OpenLogFile(); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}
