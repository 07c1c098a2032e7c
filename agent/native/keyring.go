package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// keyringBody is the body of the keyring changes: {"Key": "<base64>"}.
type keyringBody struct {
	Key string
}

func (a *API) keyringList(w http.ResponseWriter, q *request) (any, error) {
	return a.keyringRPC(q, &structs.KeyringRequest{Op: "list"})
}

func (a *API) keyringChange(w http.ResponseWriter, q *request) (any, error) {
	op := q.param("op")
	if op != "install" && op != "use" && op != "remove" {
		return nil, structs.Errorf(structs.KindNotFound, "no keyring operation %q (want list, install, use or remove)", op)
	}
	var body keyringBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	if body.Key == "" {
		return nil, structs.Errorf(structs.KindInvalid, "the request body needs a Key")
	}
	return a.keyringRPC(q, &structs.KeyringRequest{Op: op, Key: body.Key})
}

func (a *API) keyringRPC(q *request, args *structs.KeyringRequest) (any, error) {
	args.Region = a.cfg.Agent.Region
	var out structs.KeyringResponse
	if err := q.rpc.RPC("Operator.GossipKeyring", args, &out); err != nil {
		return nil, err
	}
	if out.Errors == nil {
		out.Errors = map[string]string{}
	}
	return out, nil
}
