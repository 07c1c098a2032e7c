package server

import (
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// retypeRefusal is Cinder's message for a volume that cannot be
// retyped (status, or the type it already has).
const retypeRefusal = "Invalid volume: Retype needs volume to be in available or in-use state, not be part of an active migration or a consistency group, requested type has to be different that the one from the volume, and for in-use volumes front-end qos specs cannot change."

// Retype changes a volume's type, Cinder's os-retype, when the new type
// keeps the volume where it is: its volume_backend_name is unset or the
// volume's storage host's. Moving the volume to another backend is a
// migration, which Stratus does not do, so a retype that needs one is
// refused whatever the migration policy (Cinder would accept it and
// fail in its scheduler with no valid host under "never").
func (e *Volume) Retype(args *structs.VolumeRetypeRequest, reply *structs.SingleVolumeResponse) error {
	if done, err := e.srv.forward("Volume.Retype", args, args, reply); done {
		return err
	}
	v, err := e.ownVolume(args.VolumeID, args.ProjectID)
	if err != nil {
		return err
	}
	state := e.srv.fsm.State()
	t, err := state.VolumeType(nil, args.NewType)
	if err != nil {
		return err
	}
	if t == nil {
		if uuid.Validate(args.NewType) == nil {
			return structs.Errorf(structs.KindNotFound, "Volume type %s could not be found.", args.NewType)
		}
		return structs.Errorf(structs.KindNotFound, "Volume type with name %s could not be found.", args.NewType)
	}
	if !slices.Contains([]string{structs.VolumeAvailable, structs.VolumeInUse}, v.Status) || t.ID == v.VolumeTypeID {
		return structs.Errorf(structs.KindInvalid, "%s", retypeRefusal)
	}
	if want := t.ExtraSpecs[structs.VolumeTypeBackendNameSpec]; want != "" {
		h, err := state.HostByID(nil, v.Host)
		if err != nil {
			return err
		}
		if h == nil || h.Attributes[structs.HostAttrStorageBackendName] != want {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s is kept by another backend than volume type %s's (volume_backend_name %s); retyping it would migrate it, which is not supported.", v.ID, t.Name, want)
		}
	}
	index, err := e.srv.apply(structs.VolumeUpdateType, &structs.VolumeUpdateEntry{ID: v.ID,
		FromStatus: []string{structs.VolumeAvailable, structs.VolumeInUse}, VolumeTypeID: &t.ID, UpdatedAt: time.Now().UnixNano()})
	if err != nil {
		return err
	}
	updated, err := state.Volume(nil, v.ID)
	if err != nil {
		return err
	}
	reply.Volume, reply.Index = updated, index
	return nil
}
