package server

import (
	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// volumeTask fills an attach_volume, detach_volume or swap_volume
// entry: the volume and, for an attach or a swap, the new attachment's id, drawn here because the
// FSM draws nothing. The FSM checks the volume and the instance.
func (s *Server) volumeTask(args *structs.InstanceTaskRequest, entry *structs.InstanceTaskEntry) error {
	// An older server would refuse the operation (FSMLevel).
	if l, _ := s.ClusterFSMLevel(); l < structs.FSMLevelVolumeAttach {
		return structs.Errorf(structs.KindUnavailable, "volumes can be attached once every server is upgraded (%s, the cluster is at %s)",
			structs.FSMLevelVolumeAttach, l)
	}
	if args.Volume == nil || args.Volume.VolumeID == "" {
		return structs.Errorf(structs.KindInvalid, "%s needs a volume", args.Op)
	}
	if args.Op == structs.OpSwapVolume {
		if l, _ := s.ClusterFSMLevel(); l < structs.FSMLevelSwapVolume {
			return structs.Errorf(structs.KindUnavailable, "volumes can be swapped once every server is upgraded (%s, the cluster is at %s)",
				structs.FSMLevelSwapVolume, l)
		}
	}
	v := *args.Volume
	v.AttachmentID = ""
	if args.Op == structs.OpAttachVolume || args.Op == structs.OpSwapVolume {
		v.AttachmentID = uuid.NewString()
	}
	entry.Volume = &v
	return nil
}
