package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// resolveHost finds a host by id, else by name.
func (s *Server) resolveHost(idOrName string) (*structs.Host, error) {
	state := s.fsm.State()
	h, err := state.HostByID(nil, idOrName)
	if err == nil && h == nil {
		h, err = state.HostByName(nil, idOrName)
	}
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, structs.Errorf(structs.KindNotFound, "host %q not found", idOrName)
	}
	return h, nil
}

// ForceDown sets or clears a host's forced-down mark: while set, the
// host counts as down whatever its agent reports, so its instances can
// be evacuated (Nova's forced_down, for fencing).
func (e *Host) ForceDown(args *structs.HostForceDownRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Host.ForceDown", args, args, reply); done {
		return err
	}
	h, err := e.srv.resolveHost(args.HostID)
	if err != nil {
		return err
	}
	index, err := e.srv.apply(structs.HostForceDownType, &structs.HostForceDownEntry{HostID: h.ID, ForcedDown: args.ForcedDown})
	reply.Index = index
	if err == nil {
		e.srv.logger.Info("host forced down by operator", "host", h.Name, "forced_down", args.ForcedDown)
	}
	return err
}

// Deregister removes a host that is down and holds no allocation.
func (e *Host) Deregister(args *structs.HostDeregisterRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Host.Deregister", args, args, reply); done {
		return err
	}
	h, err := e.srv.resolveHost(args.HostID)
	if err != nil {
		return err
	}
	index, err := e.srv.apply(structs.HostDeregisterType, &structs.HostDeregisterEntry{HostID: h.ID})
	reply.Index = index
	return err
}
