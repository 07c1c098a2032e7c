package command

import (
	"flag"
	"fmt"
	"io"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	register("instance snapshot", instanceSnapshotCommand)
}

// instanceSnapshotResult is the -json output of instance snapshot with -detach.
type instanceSnapshotResult struct {
	ID        string
	ImageID   string
	RequestID string
	Instance  *api.Instance
}

var instanceSnapshotCommand = (&spec{
	synopsis: "Snapshot an instance's disk into a new image",
	args:     "[options] ID NAME",
	help: `Copy the root disk of an instance into a new image named NAME (Nova's
createImage). The image is created queued; the instance's agent copies its
disk (pausing a running guest for a consistent copy) and uploads it, and the
image becomes active. With -backup-type the image is a backup of that type
(Nova's createBackup), and -rotation says how many of the instance's backups
of that type to keep: older ones are deleted once the new one is active.

ID may also be the instance's name or a prefix of its ID, if unique. The
command follows the snapshot until it finishes (instance task image_snapshot
or image_backup) and exits 1 if it failed; -detach returns as soon as the
servers accepted it.`,
	nargs: exactly(2),
	setup: func(fs *flag.FlagSet) runFunc {
		opts := &api.SnapshotOptions{Properties: map[string]string{}}
		fs.StringVar(&opts.BackupType, "backup-type", "", "Make the image a backup of this `TYPE` (daily, weekly, …).")
		fs.IntVar(&opts.Rotation, "rotation", 0, "How many backups of the type to keep (with -backup-type).")
		fs.Var(properties(opts.Properties), "property", "An image property, as `KEY=VALUE`. May be repeated.")
		detach := fs.Bool("detach", false, "Return as soon as the snapshot is accepted instead of following it.")
		return func(e *env, args []string) int {
			if opts.Rotation < 0 || (opts.Rotation > 0 && opts.BackupType == "") {
				return e.usage("-rotation needs -backup-type and must not be negative")
			}
			opts.Name = args[1]
			return e.snapshotInstance(args[0], opts, *detach)
		}
	},
}).factory()

// snapshotInstance asks for the snapshot and follows it unless detach.
func (e *env) snapshotInstance(ref string, opts *api.SnapshotOptions, detach bool) int {
	var res *api.SnapshotResult
	var wm *api.WriteMeta
	id, err := e.withInstance(ref, func(id string) (err error) {
		res, wm, err = e.client.Instances().Snapshot(id, opts)
		return err
	})
	if err != nil {
		return e.fail("Error requesting a snapshot of instance %q: %v", ref, err)
	}
	if detach {
		return e.render(&instanceSnapshotResult{ID: id, ImageID: res.ImageID, RequestID: res.RequestID, Instance: res.Instance}, func(w io.Writer) {
			fmt.Fprintf(w, "Requested a snapshot of instance %q into image %s (request %s)\n", id, res.ImageID, res.RequestID)
		})
	}
	if !e.json {
		fmt.Fprintf(e.ui.Stdout, "==> Image %q: %s\n", opts.Name, res.ImageID)
	}
	op := api.OpCreateImage
	if opts.BackupType != "" {
		op = api.OpCreateBackup
	}
	out := &opResult{ID: id, Action: op, RequestID: res.RequestID, Instance: res.Instance}
	return e.monitorOp(out, "snapshot", wm.LastIndex)
}
