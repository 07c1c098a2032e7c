package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// SetPassword stores the encrypted password an instance's guest posted
// to the metadata service, once: a second post is a conflict (Nova's
// 409). With Clear set it removes the password instead (Nova's DELETE
// os-server-password), which lets the guest post a new one.
func (e *Instance) SetPassword(args *structs.InstancePasswordRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Instance.SetPassword", args, args, reply); done {
		return err
	}
	if args.InstanceID == "" {
		return structs.Errorf(structs.KindInvalid, "instance id is required")
	}
	if len(args.Password) > structs.MaxPasswordSize {
		return structs.Errorf(structs.KindTooLarge, "password is %d bytes; at most %d are allowed", len(args.Password), structs.MaxPasswordSize)
	}
	inst, err := e.srv.fsm.State().InstanceByID(nil, args.InstanceID)
	if err != nil {
		return err
	}
	if inst == nil {
		return structs.Errorf(structs.KindNotFound, "instance %q not found", args.InstanceID)
	}
	t := structs.InstancePasswordSetType
	if args.Clear {
		t = structs.InstancePasswordClearType
	} else if inst.Password() != "" {
		// The FSM checks again; this saves a log entry for the common
		// case of a guest posting twice.
		return structs.Errorf(structs.KindConflict, "instance %s already has a password", inst.ID)
	}
	index, err := e.srv.apply(t, &structs.InstancePasswordEntry{InstanceID: inst.ID, Password: args.Password})
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
