package command

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

func init() {
	register("operator purge-deleted", purgeDeletedCommand)
}

var purgeDeletedCommand = (&spec{
	synopsis: "Purge the records of servers deleted before a time",
	args:     "[options] -before (TIME | DURATION)",
	help: `Purge now every record of the servers (instances) deleted before a
cut-off: their instance actions and events, their usage records
(os-simple-tenant-usage) and their migrations. It is what
"nova-manage db archive_deleted_rows --before" and "nova-manage db purge
--before" do for Nova, done through Raft so that every server removes the
same records.

The leader does this by itself for records older than the servers'
deleted_retention (default 24h); use this command to purge sooner, or
when the retention is "forever". -before is a time (RFC 3339, such as
2026-11-01T00:00:00Z, or a date, 2026-11-01, UTC) or a duration before
now (such as 72h or 30d). Requires an admin token.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		before := fs.String("before", "", "Purge the records of servers deleted before this time or this long ago (required).")
		return func(e *env, _ []string) int {
			cutoff, err := parseCutoff(*before, time.Now())
			if err != nil {
				return e.usage("-before: %v", err)
			}
			out, err := e.client.Operator().PurgeDeleted(cutoff)
			if err != nil {
				return e.fail("Error purging deleted servers: %v", err)
			}
			return e.render(out, func(w io.Writer) {
				fmt.Fprintf(w, "Purged the records of %d server(s) deleted before %s", out.Purged, cutoff.UTC().Format(time.RFC3339))
				if out.Entries > 0 {
					fmt.Fprintf(w, " in %d Raft entries (last index %d)", out.Entries, out.Index)
				}
				fmt.Fprintln(w)
			})
		}
	},
}).factory()

// parseCutoff reads -before: an RFC 3339 time, a date (UTC midnight), or
// a duration before now (Go's syntax, plus whole days such as 30d).
func parseCutoff(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, fmt.Errorf("a time or a duration is required")
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok && err != nil {
		n, nerr := strconv.Atoi(days)
		if nerr == nil {
			d, err = time.Duration(n)*24*time.Hour, nil
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a time (2026-11-01T00:00:00Z, 2026-11-01) nor a duration (72h, 30d)", v)
	}
	if d < 0 {
		return time.Time{}, fmt.Errorf("%q: a duration before now must not be negative", v)
	}
	return now.Add(-d), nil
}
