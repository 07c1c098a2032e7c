package virt

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFormatUptime checks uptime(1)'s wording: Nova's sample line, and
// the singulars, minutes and hours.
func TestFormatUptime(t *testing.T) {
	at := time.Date(2026, 1, 2, 8, 32, 11, 0, time.UTC)
	for _, c := range []struct {
		up    time.Duration
		users int
		loads [3]float64
		want  string
	}{
		{93*24*time.Hour + 18*time.Hour + 25*time.Minute + 30*time.Second, 12, [3]float64{0.2, 0.12, 0.14},
			" 08:32:11 up 93 days, 18:25, 12 users,  load average: 0.20, 0.12, 0.14"},
		{24*time.Hour + 5*time.Minute, 1, [3]float64{1, 2.5, 10},
			" 08:32:11 up 1 day, 5 min,  1 user,  load average: 1.00, 2.50, 10.00"},
		{3*time.Hour + 7*time.Minute, 0, [3]float64{},
			" 08:32:11 up  3:07,  0 users,  load average: 0.00, 0.00, 0.00"},
	} {
		if got := FormatUptime(at, c.up, c.users, c.loads); got != c.want {
			t.Errorf("FormatUptime(%v)\n got %q\nwant %q", c.up, got, c.want)
		}
	}
}

// TestLocalUptime reads the figures from files like /proc's and utmp.
func TestLocalUptime(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rec := func(typ int32, user string) []byte {
		b := make([]byte, utmpRecordSize)
		binary.LittleEndian.PutUint32(b, uint32(typ))
		copy(b[utmpUserOffset:], user)
		return b
	}
	var utmp []byte
	utmp = append(utmp, rec(2, "reboot")...)
	utmp = append(utmp, rec(utmpUserProcess, "alice")...)
	utmp = append(utmp, rec(utmpUserProcess, "bob")...)
	utmp = append(utmp, rec(8, "")...)
	old := [3]string{procUptime, procLoadavg, utmpPath}
	t.Cleanup(func() { procUptime, procLoadavg, utmpPath = old[0], old[1], old[2] })
	procUptime = write("uptime", []byte("8105130.50 1000.00\n"))
	procLoadavg = write("loadavg", []byte("0.20 0.12 0.14 1/100 4242\n"))
	utmpPath = write("utmp", utmp)
	got, err := LocalUptime()
	if err != nil {
		t.Fatal(err)
	}
	want := " up 93 days, 19:25,  2 users,  load average: 0.20, 0.12, 0.14"
	if len(got) != len(" 08:32:11")+len(want) || got[len(" 08:32:11"):] != want {
		t.Fatalf("LocalUptime = %q, want the time of day and %q", got, want)
	}
	procLoadavg = filepath.Join(dir, "missing")
	if _, err := LocalUptime(); err == nil {
		t.Fatal("LocalUptime without a load average succeeded")
	}
}
