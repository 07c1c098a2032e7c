package virt

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Where LocalUptime reads the machine's figures; tests point them at
// files of their own.
var (
	procUptime  = "/proc/uptime"
	procLoadavg = "/proc/loadavg"
	utmpPath    = "/run/utmp"
)

// LocalUptime is uptime(1)'s line for the machine this process runs on,
// from /proc/uptime, /proc/loadavg and the logged-in users of utmp.
func LocalUptime() (string, error) {
	up, err := os.ReadFile(procUptime)
	if err != nil {
		return "", fmt.Errorf("read the host's uptime: %w", err)
	}
	f := strings.Fields(string(up))
	if len(f) == 0 {
		return "", fmt.Errorf("read the host's uptime: %s is empty", procUptime)
	}
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return "", fmt.Errorf("read the host's uptime: %s: %w", procUptime, err)
	}
	la, err := os.ReadFile(procLoadavg)
	if err != nil {
		return "", fmt.Errorf("read the host's load average: %w", err)
	}
	lf := strings.Fields(string(la))
	if len(lf) < 3 {
		return "", fmt.Errorf("read the host's load average: %s has %d fields", procLoadavg, len(lf))
	}
	var loads [3]float64
	for i := range loads {
		if loads[i], err = strconv.ParseFloat(lf[i], 64); err != nil {
			return "", fmt.Errorf("read the host's load average: %s: %w", procLoadavg, err)
		}
	}
	return FormatUptime(time.Now(), time.Duration(secs*float64(time.Second)), countUsers(), loads), nil
}

// FormatUptime words the figures as procps's uptime(1) does: the time
// of day, how long the machine has been up, the users logged in and the
// load averages over 1, 5 and 15 minutes.
func FormatUptime(now time.Time, up time.Duration, users int, loads [3]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, " %02d:%02d:%02d up ", now.Hour(), now.Minute(), now.Second())
	mins := int(up / time.Minute)
	days, hours := mins/(24*60), (mins/60)%24
	mins %= 60
	if days > 0 {
		fmt.Fprintf(&b, "%d day%s, ", days, plural(days))
	}
	if hours > 0 {
		fmt.Fprintf(&b, "%2d:%02d, ", hours, mins)
	} else {
		fmt.Fprintf(&b, "%d min, ", mins)
	}
	fmt.Fprintf(&b, "%2d user%s, ", users, plural(users))
	fmt.Fprintf(&b, " load average: %.2f, %.2f, %.2f", loads[0], loads[1], loads[2])
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// utmp records on Linux: 384 bytes each, the record type an int32 first
// (USER_PROCESS is 7) and the user name at offset 44.
const (
	utmpRecordSize  = 384
	utmpUserProcess = 7
	utmpUserOffset  = 44
)

// countUsers counts the user sessions in utmp, as uptime(1) does; a
// machine without utmp (a container) has none.
func countUsers() int {
	data, err := os.ReadFile(utmpPath)
	if err != nil {
		return 0
	}
	n := 0
	for off := 0; off+utmpRecordSize <= len(data); off += utmpRecordSize {
		rec := data[off : off+utmpRecordSize]
		if int32(binary.LittleEndian.Uint32(rec)) == utmpUserProcess && rec[utmpUserOffset] != 0 {
			n++
		}
	}
	return n
}
