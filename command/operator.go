package command

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/stratus-cloud/stratus/api"
)

var raftListPeersCommand = (&spec{
	synopsis: "List the Raft peers",
	args:     "[options]",
	help: `List the servers of the Raft configuration, which of them is the
leader and whether each one votes.`,
	nargs: exactly(0),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			cfg, err := e.client.Operator().RaftGetConfiguration(e.queryOptions())
			if err != nil {
				return e.fail("Error getting the Raft configuration: %v", err)
			}
			return e.render(cfg, func(w io.Writer) {
				rows := make([][]string, 0, len(cfg.Servers))
				for _, s := range cfg.Servers {
					state := "follower"
					if s.Leader {
						state = "leader"
					}
					rows = append(rows, []string{s.Node, s.ID, s.Address, state, btoa(s.Voter)})
				}
				printTable(w, []string{"Node", "ID", "Address", "State", "Voter"}, rows)
			})
		}
	},
}).factory()

var raftRemovePeerCommand = (&spec{
	synopsis: "Remove a server from the Raft peers",
	args:     "[options] (-peer-address ADDR | -peer-id ID)",
	help: `Remove a server from the Raft configuration, by its RPC address or its
server ID. This is for servers that failed and will not come back; a
server that leaves gracefully removes itself.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		addr := fs.String("peer-address", "", "The RPC address (\"ip:port\") of the peer to remove.")
		id := fs.String("peer-id", "", "The server ID of the peer to remove.")
		return func(e *env, _ []string) int {
			if (*addr == "") == (*id == "") {
				return e.usage("exactly one of -peer-address and -peer-id is required")
			}
			op, what, err := e.client.Operator(), "", error(nil)
			if *addr != "" {
				what, err = fmt.Sprintf("address %q", *addr), op.RaftRemovePeerByAddress(*addr)
			} else {
				what, err = fmt.Sprintf("ID %q", *id), op.RaftRemovePeerByID(*id)
			}
			if err != nil {
				return e.fail("Error removing peer: %v", err)
			}
			return e.render(map[string]string{"Address": *addr, "ID": *id}, func(w io.Writer) {
				fmt.Fprintf(w, "Removed peer with %s\n", what)
			})
		}
	},
}).factory()

// snapshotResult is the -json output of the snapshot commands.
type snapshotResult struct {
	File string
	Size int64
}

var snapshotSaveCommand = (&spec{
	synopsis: "Save a snapshot of the cluster state",
	args:     "[options] FILE",
	help: `Save a snapshot of the cluster state to FILE. The snapshot is streamed
to FILE.tmp, then renamed to FILE once complete.`,
	nargs: exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			size, err := saveSnapshot(e.client.Operator(), e.queryOptions(), args[0])
			if err != nil {
				return e.fail("Error saving snapshot: %v", err)
			}
			return e.render(snapshotResult{args[0], size}, func(w io.Writer) {
				fmt.Fprintf(w, "Saved snapshot to %s (%d bytes)\n", args[0], size)
			})
		}
	},
}).factory()

// saveSnapshot streams a snapshot to path+".tmp", syncs it and renames it
// to path. It returns the snapshot's size.
func saveSnapshot(op *api.Operator, q *api.QueryOptions, path string) (int64, error) {
	rc, err := op.SnapshotSave(q)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, rc)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return 0, err
	}
	return n, nil
}

var snapshotRestoreCommand = (&spec{
	synopsis: "Restore the cluster state from a snapshot",
	args:     "[options] FILE",
	help: `Replace the whole cluster state with the snapshot in FILE, as written by
'cloudctl operator snapshot save'. This is destructive: every change made
since the snapshot was taken is lost.`,
	nargs: exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			f, err := os.Open(args[0])
			if err != nil {
				return e.fail("Error opening snapshot: %v", err)
			}
			defer f.Close()
			r := &countingReader{r: f}
			if err := e.client.Operator().SnapshotRestore(r); err != nil {
				return e.fail("Error restoring snapshot: %v", err)
			}
			size := r.n.Load()
			return e.render(snapshotResult{args[0], size}, func(w io.Writer) {
				fmt.Fprintf(w, "Restored snapshot from %s (%d bytes)\n", args[0], size)
			})
		}
	},
}).factory()

// countingReader counts the bytes read through it. The count is atomic
// because the HTTP transport may read from another goroutine.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
