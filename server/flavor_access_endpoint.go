package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Access adds a project to, or removes one from, a private flavor's
// access list and returns the flavor as it is afterwards. The FSM
// checks the flavor's state, so concurrent changes never lose one.
func (e *Flavor) Access(args *structs.FlavorAccessRequest, reply *structs.SingleFlavorResponse) error {
	if done, err := e.srv.forward("Flavor.Access", args, args, reply); done {
		return err
	}
	if args.FlavorID == "" {
		return structs.Errorf(structs.KindInvalid, "a flavor id is required")
	}
	index, err := e.srv.apply(structs.FlavorAccessType, &structs.FlavorAccessEntry{
		FlavorID: args.FlavorID, AddProject: args.AddProject, RemoveProject: args.RemoveProject})
	if err != nil {
		return err
	}
	f, err := e.srv.fsm.State().FlavorByID(nil, args.FlavorID)
	if err != nil {
		return err
	}
	if f == nil {
		return structs.Errorf(structs.KindNotFound, "Flavor %s could not be found.", args.FlavorID)
	}
	reply.Flavor, reply.Index = f, index
	return nil
}
