package agent

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
func (a *Agent) keyPairOwner(r *http.Request, bodyUser string) (string, error) {
	if s := subjectOf(r); s != nil {
		if bodyUser == "" {
			bodyUser = r.URL.Query().Get("user_id")
		}
		if bodyUser != "" && bodyUser != s.UserID && !s.IsAdmin() {
			return "", structs.Errorf(structs.KindPermission, "only an admin may manage another user's key pairs")
		}
		if bodyUser != "" {
			return bodyUser, nil
		}
		return s.UserID, nil
	}
	if raw := requestToken(r); raw != "" && a.identity != nil {
		if tok, err := a.identity.Verify(raw); err == nil && tok != nil && tok.UserID != "" {
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
		bodyUser = r.URL.Query().Get("user_id")
	}
	if bodyUser == "" {
		return "", structs.Errorf(structs.KindInvalid, "a key pair belongs to a user: send an identity token (X-Stratus-Token) or name the user with user_id")
	}
	return bodyUser, nil
}

func (a *Agent) keyPairList(w http.ResponseWriter, r *http.Request) (any, error) {
	user, err := a.keyPairOwner(r, "")
	if err != nil {
		return nil, err
	}
	args := structs.KeyPairListRequest{UserID: user}
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.KeyPairListResponse
	if err := a.rpc.RPC("KeyPair.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.KeyPairs == nil {
		out.KeyPairs = []*structs.KeyPair{}
	}
	return out.KeyPairs, nil
}

func (a *Agent) keyPairGet(w http.ResponseWriter, r *http.Request) (any, error) {
	user, err := a.keyPairOwner(r, "")
	if err != nil {
		return nil, err
	}
	args := structs.KeyPairSpecificRequest{UserID: user, Name: r.PathValue("name")}
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleKeyPairResponse
	if err := a.rpc.RPC("KeyPair.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out.KeyPair, nil
}

func (a *Agent) keyPairCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	var body keyPairCreateJSON
	if err := decodeJSON(w, r, &body); err != nil {
		return nil, err
	}
	user, err := a.keyPairOwner(r, body.UserID)
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
	args.AuthToken = requestToken(r)
	var out structs.SingleKeyPairResponse
	if err := a.rpc.RPC("KeyPair.Create", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.KeyPair, nil
}

func (a *Agent) keyPairDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	user, err := a.keyPairOwner(r, "")
	if err != nil {
		return nil, err
	}
	args := structs.KeyPairDeleteRequest{UserID: user, Names: []string{r.PathValue("name")}}
	args.AuthToken = requestToken(r)
	var out structs.GenericResponse
	if err := a.rpc.RPC("KeyPair.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
