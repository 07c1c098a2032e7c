package agent

import (
	"net/http"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// keyringRoutes are the gossip keyring endpoints, as Nomad's
// /v1/agent/keyring: list, install, use and remove act on every member
// of the pool through a server.
func (a *Agent) keyringRoutes() []route {
	return []route{
		{"GET /v1/agent/keyring/list", policy.Admin, a.keyringList},
		{"POST /v1/agent/keyring/{op}", policy.Admin, a.keyringChange},
		{"PUT /v1/agent/keyring/{op}", policy.Admin, a.keyringChange},
	}
}

// keyringBody is the body of the keyring changes: {"Key": "<base64>"}.
type keyringBody struct {
	Key string
}

func (a *Agent) keyringList(w http.ResponseWriter, r *http.Request) (any, error) {
	return a.keyringRPC(r, &structs.KeyringRequest{Op: "list"})
}

func (a *Agent) keyringChange(w http.ResponseWriter, r *http.Request) (any, error) {
	op := r.PathValue("op")
	if op != "install" && op != "use" && op != "remove" {
		return nil, structs.Errorf(structs.KindNotFound, "no keyring operation %q (want list, install, use or remove)", op)
	}
	var body keyringBody
	if err := decodeJSON(w, r, &body); err != nil {
		return nil, err
	}
	if body.Key == "" {
		return nil, structs.Errorf(structs.KindInvalid, "the request body needs a Key")
	}
	return a.keyringRPC(r, &structs.KeyringRequest{Op: op, Key: body.Key})
}

func (a *Agent) keyringRPC(r *http.Request, args *structs.KeyringRequest) (any, error) {
	args.Region = a.config.Region
	args.AuthToken = requestToken(r)
	var out structs.KeyringResponse
	if err := a.rpc.RPC("Operator.GossipKeyring", args, &out); err != nil {
		return nil, err
	}
	if out.Errors == nil {
		out.Errors = map[string]string{}
	}
	return out, nil
}
