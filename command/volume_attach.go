package command

import (
	"flag"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	register("volume attach", volumeAttachCommand)
	register("volume detach", volumeDetachCommand)
}

// volumeFollowHelp says how the attach commands report.
const volumeFollowHelp = `

The instance's agent carries it out as an instance operation: the command
follows it until it finishes (-detach returns at once), and "cloudctl
volume status" shows the volume in-use or available again.`

var volumeAttachCommand = (&spec{
	synopsis: "Attach a volume to an instance",
	args:     "[options] VOLUME INSTANCE",
	help: `Attach VOLUME (an ID, a name or an ID prefix) to INSTANCE (an ID or a name), hot-plugged
into a running guest as a SCSI disk (/dev/sdb, sdc, … or the -device
asked for). The volume must be available. One kept on another host than
the instance's is reached through its storage host's NBD export (its
agent's storage nbd_address, over TLS); a storage host without one
serves only its own instances.` + volumeFollowHelp,
	nargs: exactly(2),
	setup: func(fs *flag.FlagSet) runFunc {
		device := fs.String("device", "", "The guest device to attach as (/dev/sdX; default: the first free one).")
		detach := fs.Bool("detach", false, "Return as soon as the attach is accepted instead of following it.")
		return func(e *env, args []string) int {
			vol, err := e.volumeID(e.client.Volumes(), args[0])
			if err != nil {
				return e.fail("Error finding volume %q: %v", args[0], err)
			}
			opts := &api.ActionOptions{Volume: vol, Device: *device}
			return e.runOp(api.OpAttachVolume, "volume attach", args[1], opts, *detach)
		}
	},
}).factory()

var volumeDetachCommand = (&spec{
	synopsis: "Detach a volume from an instance",
	args:     "[options] VOLUME INSTANCE",
	help: `Detach VOLUME (an ID, a name or an ID prefix) from INSTANCE (an ID or a name): unplugged
from the guest at once, the volume's data kept. The root volume of an
instance booted from a volume cannot be detached.` + volumeFollowHelp,
	nargs: exactly(2),
	setup: func(fs *flag.FlagSet) runFunc {
		detach := fs.Bool("detach", false, "Return as soon as the detach is accepted instead of following it.")
		return func(e *env, args []string) int {
			vol, err := e.volumeID(e.client.Volumes(), args[0])
			if err != nil {
				return e.fail("Error finding volume %q: %v", args[0], err)
			}
			opts := &api.ActionOptions{Volume: vol}
			return e.runOp(api.OpDetachVolume, "volume detach", args[1], opts, *detach)
		}
	},
}).factory()
