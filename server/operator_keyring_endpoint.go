package server

import (
	"errors"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/structs"
)

// GossipKeyring lists or changes the gossip encryption keyring of every
// member of the pool (servers and client agents): this server applies the
// operation to its own keyring and asks every alive member to do the
// same over gossip's encrypted messages, collecting their answers. Any
// server can do it; it is not forwarded to the leader, and it does not go
// through Raft because the keyring is each member's own (persisted in its
// data dir).
func (e *Operator) GossipKeyring(args *structs.KeyringRequest, reply *structs.KeyringResponse) error {
	if region := args.RequestRegion(); region != "" && region != e.srv.config.Region {
		return structs.Errorf(structs.KindInvalid, "region %q is not served here (this is %q)", region, e.srv.config.Region)
	}
	op, err := gossip.ParseKeyringOp(args.Op)
	if err != nil {
		return structs.Errorf(structs.KindInvalid, "%v", err)
	}
	if op != gossip.KeyringList && args.Key == "" {
		return structs.Errorf(structs.KindInvalid, "the %s operation needs a key", op)
	}
	resp, err := e.srv.gossip.Keyring(op, args.Key, 0)
	switch {
	case errors.Is(err, gossip.ErrEncryptionDisabled):
		return structs.Errorf(structs.KindInvalid, "%v", err)
	case errors.Is(err, gossip.ErrShutdown):
		return structs.Errorf(structs.KindUnavailable, "%v", err)
	case err != nil:
		return structs.Errorf(structs.KindInvalid, "%v", err)
	}
	*reply = structs.KeyringResponse{Members: resp.Members, Responses: resp.Responses, Errors: resp.Errors,
		Keys: resp.Keys, PrimaryKeys: resp.PrimaryKeys}
	return nil
}
