package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// NodeIntroCreate issues an introduction token (admin).
func (e *Operator) NodeIntroCreate(args *structs.NodeIntroCreateRequest, reply *structs.NodeIntroCreateResponse) error {
	if args.HostName != "" {
		if err := (&structs.Host{ID: "x", Name: args.HostName}).Validate(); err != nil {
			return structs.Errorf(structs.KindInvalid, "host name %q: %s", args.HostName, structs.Message(err))
		}
	}
	tok, exp, err := e.srv.NodeIntroToken(args.HostName, args.TTL)
	if err != nil {
		return err
	}
	reply.Token, reply.HostName, reply.ExpiresAt = tok, args.HostName, exp
	return nil
}
