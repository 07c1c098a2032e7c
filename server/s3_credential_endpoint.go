package server

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// EC2-style credentials (Keystone's OS-EC2) for the S3 API. Who may
// manage whose credentials is the identity API's policy; the endpoint
// trusts its callers as the Identity endpoint does.

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// CredentialCreate issues a credential to a user for a project; the
// access key and the secret are chosen here, before proposal.
func (e *S3) CredentialCreate(args *structs.EC2CredentialCreateRequest, reply *structs.EC2CredentialResponse) error {
	if done, err := e.srv.forward("S3.CredentialCreate", args, args, reply); done {
		return err
	}
	if args.UserID == "" || args.ProjectID == "" {
		return structs.Errorf(structs.KindInvalid, "a credential needs a user and a project")
	}
	c := &structs.EC2Credential{Access: randomHex(16), Secret: randomHex(20), UserID: args.UserID,
		ProjectID: args.ProjectID, CreatedAt: time.Now().UnixNano()}
	index, err := e.srv.apply(structs.EC2CredentialType, &structs.EC2CredentialEntry{Op: structs.S3OpCreate, Credential: c})
	if err != nil {
		return err
	}
	reply.Index = index
	reply.Credential, err = e.srv.fsm.State().EC2CredentialByAccess(nil, c.Access)
	return err
}

// CredentialDelete deletes a credential of a user.
func (e *S3) CredentialDelete(args *structs.EC2CredentialDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("S3.CredentialDelete", args, args, reply); done {
		return err
	}
	c, err := e.srv.fsm.State().EC2CredentialByAccess(nil, args.Access)
	if err != nil {
		return err
	}
	if c == nil || (args.UserID != "" && c.UserID != args.UserID) {
		return fsm.EC2CredentialNotFound(args.Access)
	}
	index, err := e.srv.apply(structs.EC2CredentialType, &structs.EC2CredentialEntry{Op: structs.S3OpDelete, Access: args.Access})
	reply.Index = index
	return err
}

// CredentialList lists a user's credentials, or reads one by access key.
func (e *S3) CredentialList(args *structs.EC2CredentialListRequest, reply *structs.EC2CredentialListResponse) error {
	if done, err := e.srv.forward("S3.CredentialList", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		index := state.Index(fsm.TableEC2Credentials)
		if args.Access != "" {
			c, err := state.EC2CredentialByAccess(ws, args.Access)
			if err != nil {
				return nil, 0, err
			}
			if c == nil || (args.UserID != "" && c.UserID != args.UserID) {
				return nil, index, fsm.EC2CredentialNotFound(args.Access)
			}
			reply.Credentials = []*structs.EC2Credential{c}
			return c, index, nil
		}
		out, err := state.EC2CredentialsOfUser(ws, args.UserID)
		reply.Credentials = out
		return out, index, err
	})
}
