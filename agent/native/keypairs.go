package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// A key pair belongs to a user. On the native API the user is the one of
// the caller's identity token (X-Stratus-Token holding a Keystone token,
// as `cloudctl openrc` sets up), else the user_id an operator names.

// keyPairCreateJSON is the body of POST /v1/keypairs.
type keyPairCreateJSON struct {
	Name      string
	Type      string
	PublicKey string
	UserID    string
}

// keyPairOwner returns whose key pairs a request is about.
func (a *API) keyPairOwner(q *request, bodyUser string) (string, error) {
	if s := q.subject; s != nil {
		if bodyUser == "" {
			bodyUser = q.URL.Query().Get("user_id")
		}
		if bodyUser != "" && bodyUser != s.UserID && !s.IsAdmin() {
			return "", structs.Errorf(structs.KindPermission, "only an admin may manage another user's key pairs")
		}
		if bodyUser != "" {
			return bodyUser, nil
		}
		return s.UserID, nil
	}
	if raw := q.token; raw != "" && a.cfg.Verifier != nil {
		if tok, err := a.cfg.Verifier.Verify(raw); err == nil && tok != nil && tok.UserID != "" {
			if bodyUser != "" && bodyUser != tok.UserID && !tok.IsAdmin() {
				return "", structs.Errorf(structs.KindPermission, "only an admin may manage another user's key pairs")
			}
			if bodyUser != "" {
				return bodyUser, nil
			}
			return tok.UserID, nil
		}
	}
	if bodyUser == "" {
		bodyUser = q.URL.Query().Get("user_id")
	}
	if bodyUser == "" {
		return "", structs.Errorf(structs.KindInvalid, "a key pair belongs to a user: send an identity token (X-Stratus-Token) or name the user with user_id")
	}
	return bodyUser, nil
}

func (a *API) keyPairList(w http.ResponseWriter, q *request) (any, error) {
	user, err := a.keyPairOwner(q, "")
	if err != nil {
		return nil, err
	}
	args := structs.KeyPairListRequest{UserID: user}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.KeyPairListResponse
	if err := q.rpc.RPC("KeyPair.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.KeyPairs == nil {
		out.KeyPairs = []*structs.KeyPair{}
	}
	return out.KeyPairs, nil
}

func (a *API) keyPairGet(w http.ResponseWriter, q *request) (any, error) {
	user, err := a.keyPairOwner(q, "")
	if err != nil {
		return nil, err
	}
	args := structs.KeyPairSpecificRequest{UserID: user, Name: q.param("name")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleKeyPairResponse
	if err := q.rpc.RPC("KeyPair.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out.KeyPair, nil
}

func (a *API) keyPairCreate(w http.ResponseWriter, q *request) (any, error) {
	var body keyPairCreateJSON
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	user, err := a.keyPairOwner(q, body.UserID)
	if err != nil {
		return nil, err
	}
	if body.Type == "" {
		body.Type = "ssh"
	}
	if body.PublicKey == "" {
		return nil, structs.Errorf(structs.KindInvalid, "a public key is required (cloudctl keypair create generates one locally)")
	}
	args := structs.KeyPairCreateRequest{KeyPair: &structs.KeyPair{Name: body.Name, UserID: user, Type: body.Type, PublicKey: body.PublicKey}}
	var out structs.SingleKeyPairResponse
	if err := q.rpc.RPC("KeyPair.Create", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.KeyPair, nil
}

func (a *API) keyPairDelete(w http.ResponseWriter, q *request) (any, error) {
	user, err := a.keyPairOwner(q, "")
	if err != nil {
		return nil, err
	}
	args := structs.KeyPairDeleteRequest{UserID: user, Names: []string{q.param("name")}}
	var out structs.GenericResponse
	if err := q.rpc.RPC("KeyPair.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
