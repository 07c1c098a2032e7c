package command

import (
	"flag"
	"fmt"
	"io"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	groups["volume"] = "Manage block storage volumes, their snapshots and attachments"
	register("volume create", volumeCreateCommand)
	register("volume list", volumeListCommand)
	register("volume status", volumeStatusCommand)
	register("volume delete", volumeDeleteCommand)
	register("volume snapshot", volumeSnapshotCommand)
}

// volumeProjectHelp explains whose volumes the commands act on.
const volumeProjectHelp = `

Volumes belong to a project: the one of the identity token in
CLOUDCTL_TOKEN (see "cloudctl openrc"), or the project ID given with
-project (an operator's call, or an admin's).`

// projectFlag adds -project and returns a function giving the handle it
// selects.
func projectFlag(fs *flag.FlagSet) func(c *api.Client) *api.Volumes {
	project := fs.String("project", "", "The ID of the project whose volumes these are (default: the token's project).")
	return func(c *api.Client) *api.Volumes {
		if *project == "" {
			return c.Volumes()
		}
		return c.Volumes().ForProject(*project)
	}
}

var volumeCreateCommand = (&spec{
	synopsis: "Create a volume",
	args:     "[options] NAME",
	help: `Create a volume named NAME: an empty one of -size GB, or a copy of an
image (-image), of a volume snapshot (-snapshot) or of another volume
(-source), at least as large as its source. A storage host builds it in
the background: "cloudctl volume status" shows when it is available.` + volumeProjectHelp,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		in := &api.VolumeCreate{}
		fs.IntVar(&in.SizeGB, "size", 0, "The size in GB (default: the snapshot's or source volume's).")
		fs.StringVar(&in.ImageID, "image", "", "Make the volume from this image ID.")
		fs.StringVar(&in.SnapshotID, "snapshot", "", "Make the volume from this volume snapshot ID.")
		fs.StringVar(&in.SourceVolumeID, "source", "", "Make the volume a copy of this volume ID.")
		fs.StringVar(&in.AZ, "az", "", "The availability zone of the storage host.")
		fs.StringVar(&in.Description, "description", "", "A description of the volume.")
		handle := projectFlag(fs)
		return func(e *env, args []string) int {
			in.Name = args[0]
			vols := handle(e.client)
			if in.SizeGB == 0 && (in.SnapshotID != "" || in.SourceVolumeID != "") {
				size, code := e.sourceSize(vols, in)
				if code != 0 {
					return code
				}
				in.SizeGB = size
			}
			if in.SizeGB < 1 {
				return e.usage("a volume needs -size of at least 1 GB")
			}
			v, _, err := vols.Create(in)
			if err != nil {
				return e.fail("Error creating volume %q: %v", in.Name, err)
			}
			return e.render(v, func(w io.Writer) {
				fmt.Fprintf(w, "Volume %q created with ID %q (%s)\n", v.Name, v.ID, v.Status)
			})
		}
	},
}).factory()

// sourceSize is the size of the volume a new one is copied from (for a
// snapshot, the size of the volume it was taken of, which the servers
// check again).
func (e *env) sourceSize(vols *api.Volumes, in *api.VolumeCreate) (int, int) {
	if in.SourceVolumeID != "" {
		src, _, err := vols.Info(in.SourceVolumeID, e.queryOptions())
		if err != nil {
			return 0, e.fail("Error reading volume %q: %v", in.SourceVolumeID, err)
		}
		return src.SizeGB, 0
	}
	return 0, e.usage("a volume made from a snapshot needs -size (at least the snapshot's)")
}

var volumeListCommand = (&spec{
	synopsis: "List volumes",
	args:     "[options]",
	help:     "List a project's volumes." + volumeProjectHelp,
	nargs:    exactly(0),
	list:     true,
	setup: func(fs *flag.FlagSet) runFunc {
		handle := projectFlag(fs)
		return func(e *env, _ []string) int {
			vols, _, err := handle(e.client).List(e.queryOptions())
			if err != nil {
				return e.fail("Error listing volumes: %v", err)
			}
			if vols == nil {
				vols = []*api.Volume{}
			}
			return e.render(vols, func(w io.Writer) {
				if len(vols) == 0 {
					fmt.Fprintln(w, "No volumes found")
					return
				}
				rows := make([][]string, 0, len(vols))
				for _, v := range vols {
					rows = append(rows, []string{v.ID, v.Name, v.Status, itoa(v.SizeGB), v.AvailabilityZone, btoa(v.Bootable)})
				}
				printTable(w, []string{"ID", "Name", "Status", "Size (GB)", "Zone", "Bootable"}, rows)
			})
		}
	},
}).factory()

var volumeStatusCommand = (&spec{
	synopsis: "Show a volume",
	args:     "[options] VOLUME",
	help:     "Show a volume's status and details. VOLUME is an ID, a name or an ID prefix.",
	nargs:    exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			id, err := e.volumeID(e.client.Volumes(), args[0])
			if err != nil {
				return e.fail("Error reading volume %q: %v", args[0], err)
			}
			v, _, err := e.client.Volumes().Info(id, e.queryOptions())
			if err != nil {
				return e.fail("Error reading volume %q: %v", args[0], err)
			}
			return e.render(v, func(w io.Writer) {
				source := "<none>"
				switch {
				case v.ImageID != "":
					source = "image " + v.ImageID
				case v.SnapshotID != "":
					source = "snapshot " + v.SnapshotID
				case v.SourceVolumeID != "":
					source = "volume " + v.SourceVolumeID
				}
				printKV(w, []kv{
					{"ID", v.ID}, {"Name", v.Name}, {"Status", v.Status}, {"Size (GB)", itoa(v.SizeGB)},
					{"Project", v.ProjectID}, {"Zone", v.AvailabilityZone}, {"Bootable", btoa(v.Bootable)},
					{"Source", source}, {"Storage Host", v.Host}, {"Location", v.ProviderLocation},
					{"Error", v.ErrorMessage}, {"Created", formatTime(v.CreatedAt)},
				})
			})
		}
	},
}).factory()

var volumeDeleteCommand = (&spec{
	synopsis: "Delete volumes",
	args:     "[options] VOLUME [VOLUME...]",
	help: `Delete the volumes given (IDs, names or ID prefixes): their storage hosts remove their
data, then their records. A volume with snapshots, or in use, is refused;
-force (admins) deletes from any status but attached. Every one is tried;
the command fails if any deletion failed.`,
	nargs: atLeast(1),
	setup: func(fs *flag.FlagSet) runFunc {
		force := fs.Bool("force", false, "Delete whatever the volume's status (admins only).")
		return func(e *env, ids []string) int {
			deleted, code := []string{}, 0
			for _, ref := range ids {
				id, err := e.volumeID(e.client.Volumes(), ref)
				if err == nil {
					_, err = e.client.Volumes().Delete(id, *force)
				}
				if err != nil {
					code = e.fail("Error deleting volume %q: %v", ref, err)
					continue
				}
				deleted = append(deleted, id)
			}
			if rc := e.render(map[string][]string{"Deleted": deleted}, func(w io.Writer) {
				for _, id := range deleted {
					fmt.Fprintf(w, "Volume %q is being deleted\n", id)
				}
			}); rc != 0 {
				return rc
			}
			return code
		}
	},
}).factory()

var volumeSnapshotCommand = (&spec{
	synopsis: "Snapshot a volume",
	args:     "[options] VOLUME",
	help: `Take a snapshot of VOLUME (an ID, a name or an ID prefix), kept on its storage host: a volume made
from it later ("cloudctl volume create -snapshot") has the data the
volume has now.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		name := fs.String("name", "", "The snapshot's name.")
		force := fs.Bool("force", false, "Snapshot a volume that is in use.")
		return func(e *env, args []string) int {
			id, err := e.volumeID(e.client.Volumes(), args[0])
			if err != nil {
				return e.fail("Error snapshotting volume %q: %v", args[0], err)
			}
			s, _, err := e.client.Volumes().Snapshot(id, *name, *force)
			if err != nil {
				return e.fail("Error snapshotting volume %q: %v", args[0], err)
			}
			return e.render(s, func(w io.Writer) {
				fmt.Fprintf(w, "Snapshot %q of volume %q created with ID %q (%s)\n", s.Name, s.VolumeID, s.ID, s.Status)
			})
		}
	},
}).factory()
