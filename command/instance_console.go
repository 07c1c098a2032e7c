package command

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// logsFollowInterval is how often `instance logs -f` reads the log again.
var logsFollowInterval = 2 * time.Second

var instanceLogsCommand = (&spec{
	synopsis: "Show an instance's console output",
	args:     "[options] ID",
	help: `Show the end of an instance's console log: what its serial console
printed (firmware, boot loader, kernel, login prompt). ID may also be the
instance's name or a unique prefix of its ID. With -f, keep printing what
the console adds until interrupted.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		tail := fs.Int("tail", 0, "Show only the last `N` lines (0: all that is kept, the last 64 KiB).")
		follow := fs.Bool("f", false, "Follow the log: print new output as it comes.")
		return func(e *env, args []string) int {
			if *tail < 0 {
				return e.usage("-tail must not be negative")
			}
			var out string
			id, err := e.withInstance(args[0], func(id string) error {
				var err error
				out, err = e.client.Instances().ConsoleOutput(id, *tail)
				return err
			})
			if err != nil {
				return e.fail("Error reading the console of instance %q: %v", args[0], err)
			}
			if e.json && !*follow {
				return e.render(map[string]string{"Output": out}, nil)
			}
			fmt.Fprint(e.ui.Stdout, out)
			if !*follow {
				return 0
			}
			return e.followLogs(id, out)
		}
	},
}).factory()

// followLogs prints what the console log adds, reading it every
// logsFollowInterval, until the instance is gone or reading fails.
func (e *env) followLogs(id, last string) int {
	for {
		time.Sleep(logsFollowInterval)
		out, err := e.client.Instances().ConsoleOutput(id, 0)
		if api.IsNotFound(err) {
			return 0
		}
		if err != nil {
			return e.fail("Error reading the console of instance %q: %v", id, err)
		}
		fmt.Fprint(e.ui.Stdout, newOutput(last, out))
		last = out
	}
}

// newOutput is what next adds to prev: the console log is a window on
// the end of the log, so the new part follows where prev's last lines
// appear in next. When they do not appear (the log was reset), all of
// next is new.
func newOutput(prev, next string) string {
	if prev == "" || strings.HasPrefix(next, prev) {
		return strings.TrimPrefix(next, prev)
	}
	lines := strings.SplitAfter(prev, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	// The most of prev's last lines (up to 5) that next still holds.
	for k := min(5, len(lines)); k > 0; k-- {
		tail := strings.Join(lines[len(lines)-k:], "")
		if i := strings.LastIndex(next, tail); i >= 0 && (i == 0 || next[i-1] == '\n') {
			return next[i+len(tail):]
		}
	}
	return next
}

var instanceConsoleCommand = (&spec{
	synopsis: "Print the URL of an instance's remote console",
	args:     "[options] ID",
	help: `Ask for a remote console of an instance and print its URL: -type novnc
(the default) is a page that opens the VNC console in a browser; serial is
a websocket carrying the serial console; xvpvnc is the plain TCP VNC proxy
(a client sends "CONNECT /console?token=… HTTP/1.1" and a blank line). The
URL works once and expires after the agent's console token_ttl (10
minutes by default).`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		typ := fs.String("type", api.ConsoleNoVNC, "The console `TYPE`: novnc, serial or xvpvnc.")
		return func(e *env, args []string) int {
			switch *typ {
			case api.ConsoleNoVNC, api.ConsoleSerial, api.ConsoleXVPVNC:
			default:
				return e.usage("-type must be novnc, serial or xvpvnc, not %q", *typ)
			}
			var c *api.Console
			_, err := e.withInstance(args[0], func(id string) error {
				var err error
				c, err = e.client.Instances().Console(id, *typ)
				return err
			})
			if err != nil {
				return e.fail("Error opening the %s console of instance %q: %v", *typ, args[0], err)
			}
			return e.render(c, func(w io.Writer) { fmt.Fprintln(w, c.URL) })
		}
	},
}).factory()
