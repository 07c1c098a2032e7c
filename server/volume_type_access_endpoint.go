package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// TypeAccess gives a project access to a private volume type or takes
// it away (os-volume-type-access, admins).
func (e *Volume) TypeAccess(args *structs.VolumeTypeAccessRequest, reply *structs.SingleVolumeTypeResponse) error {
	if done, err := e.srv.forward("Volume.TypeAccess", args, args, reply); done {
		return err
	}
	if args.TypeID == "" || args.ProjectID == "" {
		return structs.Errorf(structs.KindInvalid, "Invalid input received: a volume type access needs a type and a project")
	}
	t, err := e.srv.fsm.State().VolumeType(nil, args.TypeID)
	if err != nil {
		return err
	}
	if t == nil {
		return structs.Errorf(structs.KindNotFound, "Volume type %s could not be found.", args.TypeID)
	}
	index, err := e.srv.apply(structs.VolumeTypeAccessType, &structs.VolumeTypeAccessEntry{TypeID: t.ID,
		ProjectID: args.ProjectID, Remove: args.Remove})
	if err != nil {
		return err
	}
	stored, err := e.srv.fsm.State().VolumeType(nil, t.ID)
	if err != nil {
		return err
	}
	reply.Type, reply.Index = stored, index
	return nil
}

// checkVolumeType: a non-admin creates or retypes volumes only with the
// types its project may use; a private type it was given no access to
// does not exist for it, as in Cinder.
func checkVolumeType(s *Server, c *rpcCredential, args any) error {
	key := ""
	switch req := args.(type) {
	case *structs.VolumeCreateRequest:
		if req.Volume != nil {
			key = req.Volume.VolumeTypeID
		}
	case *structs.VolumeRetypeRequest:
		key = req.NewType
	}
	if key == "" {
		return nil
	}
	t, err := s.fsm.State().VolumeType(nil, key)
	if err != nil || t == nil || t.UsableBy(c.subject.ProjectID) {
		return err
	}
	return structs.Errorf(structs.KindNotFound, "Volume type %s could not be found.", key)
}
