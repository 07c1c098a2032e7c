package agent

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"
)

// log_file writes the agent's log to a file as well as to stderr, as
// Nomad's does, rotated by size (log_rotate_bytes), by age
// (log_rotate_duration) and keeping log_rotate_max_files old files.

// Defaults of the log file's rotation.
const (
	DefaultLogRotateBytes    = 100 << 20
	DefaultLogRotateMaxFiles = 5
)

// LogFile is an open log file; Close stops its rotation timer.
type LogFile struct {
	*lumberjack.Logger
	stop chan struct{}
}

// Close stops the timed rotation and closes the file.
func (l *LogFile) Close() error {
	if l.stop != nil {
		close(l.stop)
		l.stop = nil
	}
	return l.Logger.Close()
}

// OpenLogFile opens the configured log file, or returns nil without
// one.
func (c *Config) OpenLogFile() (*LogFile, error) {
	if c.LogFile == "" {
		return nil, nil
	}
	if !filepath.IsAbs(c.LogFile) {
		return nil, fmt.Errorf("log_file %q must be an absolute path", c.LogFile)
	}
	size := c.LogRotateBytes
	if size <= 0 {
		size = DefaultLogRotateBytes
	}
	keep := c.LogRotateMaxFiles
	if keep == 0 {
		keep = DefaultLogRotateMaxFiles
	}
	var every time.Duration
	if c.LogRotateDuration != "" {
		d, err := time.ParseDuration(c.LogRotateDuration)
		if err != nil || d < time.Minute {
			return nil, fmt.Errorf("log_rotate_duration %q: want a duration of a minute or more, such as 24h", c.LogRotateDuration)
		}
		every = d
	}
	lj := &lumberjack.Logger{Filename: c.LogFile, MaxSize: max(1, int((size+(1<<20)-1)>>20)), MaxBackups: max(keep, 0)}
	// Opened now, so that a file that cannot be written fails the start.
	if _, err := lj.Write(nil); err != nil {
		return nil, fmt.Errorf("log_file: %w", err)
	}
	l := &LogFile{Logger: lj}
	if every > 0 {
		l.stop = make(chan struct{})
		go func(stop chan struct{}) {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					_ = lj.Rotate()
				}
			}
		}(l.stop)
	}
	return l, nil
}

// LogOutput is where the agent logs: stderr and the log file, if any.
func LogOutput(stderr io.Writer, f *LogFile) io.Writer {
	if f == nil {
		return stderr
	}
	return io.MultiWriter(stderr, f)
}
