package server

import (
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// A shelve snapshots the instance's disk to an image of its own (Nova's
// "<name>-shelved", private to the project), which the leader makes
// before the shelve's entry so that the FSM only names it; a refused
// shelve deletes it again. The FSM asks the agent for the snapshot
// (fsm/conductor_shelve_image.go).

// shelvedImageKey is the system metadata naming a shelve's snapshot.
const shelvedImageKey = "shelved_image_id"

// prepareShelve makes a shelve's snapshot image and names it in entry;
// it returns how to delete it should the shelve be refused. Servers
// older than FSMLevelDiskCopy would ignore the image, and a host whose
// driver cannot snapshot shelves without one, as before.
func (s *Server) prepareShelve(args *structs.InstanceTaskRequest, entry *structs.InstanceTaskEntry) (undo func(), err error) {
	if entry.Op != structs.OpShelve {
		return nil, nil
	}
	entry.ImageID = "" // only the leader names a shelve's image
	if l, _ := s.ClusterFSMLevel(); l < structs.FSMLevelDiskCopy {
		return nil, nil
	}
	state := s.fsm.State()
	inst, err := state.InstanceByID(nil, entry.InstanceID)
	if err != nil || inst == nil || inst.HostID == "" {
		return nil, err
	}
	if inst.RootVolume() != nil {
		// As Nova's: a server booted from a volume shelves without an
		// image; its root volume stays attached and boots it again.
		return nil, nil
	}
	h, err := state.HostByID(nil, inst.HostID)
	if err != nil || h == nil || !h.HasCapability(structs.HostCapabilitySnapshot) {
		return nil, err
	}
	img := structs.SnapshotImage(inst, inst.Name+"-shelved", args.UserID, nil)
	img.ID = uuid.NewString()
	now := time.Now().UnixNano()
	img.CreatedAt, img.UpdatedAt, img.Status = now, now, structs.ImageQueued
	if err := img.Validate(); err != nil {
		return nil, err
	}
	if _, err := s.apply(structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: img, Create: true}); err != nil {
		return nil, err
	}
	entry.ImageID = img.ID
	return func() { s.deleteShelvedImage(img.ID) }, nil
}

// shelvedImageOf returns the snapshot an unshelve of a shelved (not
// offloaded) instance leaves behind: it boots its own disk again, so
// the image goes once the unshelve is under way, as Nova's conductor
// deletes it. An offloaded instance's image is its destination agent's
// to delete once it runs from it.
func (s *Server) shelvedImageOf(args *structs.InstanceTaskRequest) string {
	if args.Op != structs.OpUnshelve {
		return ""
	}
	inst, err := s.fsm.State().InstanceByID(nil, args.InstanceID)
	if err != nil || inst == nil || inst.VMState != structs.VMStateShelved {
		return ""
	}
	return inst.SystemMetadata[shelvedImageKey]
}

func (s *Server) deleteShelvedImage(id string) {
	if _, err := s.apply(structs.ImageDeleteType, &structs.ImageDeleteEntry{ImageID: id}); err != nil && structs.KindOf(err) != structs.KindNotFound {
		s.logger.Warn("cannot delete a shelve's snapshot image", "image_id", id, "error", err)
		return
	}
	s.nudgeImageSync()
}
