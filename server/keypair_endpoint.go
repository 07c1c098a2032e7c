package server

import (
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// KeyPair is the endpoint for users' key pairs.
type KeyPair struct{ srv *Server }

// keyPairCreateMu serializes the leader's check-then-propose of key pair
// creation, so two concurrent creates of one name cannot both pass the
// conflict check.
var keyPairCreateMu sync.Mutex

// Create stores a new key pair; a name the user already has is a
// conflict. The fingerprint of an SSH key is computed when the caller
// left it empty; an x509 key pair must carry its certificate's.
func (e *KeyPair) Create(args *structs.KeyPairCreateRequest, reply *structs.SingleKeyPairResponse) error {
	if done, err := e.srv.forward("KeyPair.Create", args, args, reply); done {
		return err
	}
	if args.KeyPair == nil {
		return structs.Errorf(structs.KindInvalid, "no keypair to create")
	}
	kp := *args.KeyPair
	if err := kp.Validate(); err != nil {
		return err
	}
	if kp.Fingerprint == "" {
		fp, err := sshFingerprint(kp.Type, kp.PublicKey)
		if err != nil {
			return err
		}
		kp.Fingerprint = fp
	}
	keyPairCreateMu.Lock()
	defer keyPairCreateMu.Unlock()
	existing, err := e.srv.fsm.State().KeyPair(nil, kp.UserID, kp.Name)
	if err != nil {
		return err
	}
	if existing != nil {
		return structs.Errorf(structs.KindConflict, "key pair %q already exists", kp.Name)
	}
	kp.CreatedAt = time.Now().UnixNano()
	index, err := e.srv.apply(structs.KeyPairUpsertRequestType, &structs.KeyPairUpsertRequest{KeyPairs: []*structs.KeyPair{&kp}})
	if err != nil {
		return err
	}
	kp.CreateIndex, kp.ModifyIndex = index, index
	reply.KeyPair, reply.Index = &kp, index
	return nil
}

// sshFingerprint is Nova's fingerprint of an OpenSSH public key: the MD5
// of the key blob as colon-separated hex.
func sshFingerprint(keyType, publicKey string) (string, error) {
	if keyType != "ssh" {
		return "", structs.Errorf(structs.KindInvalid, "a %s key pair needs its fingerprint", keyType)
	}
	fields := strings.Fields(publicKey)
	if len(fields) < 2 {
		return "", structs.Errorf(structs.KindInvalid, "public key is not in OpenSSH format (type, base64 key, comment)")
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil || len(blob) == 0 {
		return "", structs.Errorf(structs.KindInvalid, "public key's key data is not base64")
	}
	sum := md5.Sum(blob)
	hexes := make([]string, len(sum))
	for i, b := range sum {
		hexes[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(hexes, ":"), nil
}

// List reads one user's key pairs, sorted by name.
func (e *KeyPair) List(args *structs.KeyPairListRequest, reply *structs.KeyPairListResponse) error {
	if done, err := e.srv.forward("KeyPair.List", args, args, reply); done {
		return err
	}
	if args.UserID == "" {
		return structs.Errorf(structs.KindInvalid, "user id is required")
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		kps, err := state.KeyPairsByUser(ws, args.UserID)
		reply.KeyPairs = kps
		return kps, state.Index(fsm.TableKeyPairs), err
	})
}

// Get reads one of a user's key pairs.
func (e *KeyPair) Get(args *structs.KeyPairSpecificRequest, reply *structs.SingleKeyPairResponse) error {
	if done, err := e.srv.forward("KeyPair.Get", args, args, reply); done {
		return err
	}
	if args.UserID == "" || args.Name == "" {
		return structs.Errorf(structs.KindInvalid, "user id and key pair name are required")
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		kp, err := state.KeyPair(ws, args.UserID, args.Name)
		reply.KeyPair = kp
		return kp, state.Index(fsm.TableKeyPairs), err
	})
	if err == nil && reply.KeyPair == nil {
		return structs.Errorf(structs.KindNotFound, "key pair %q not found", args.Name)
	}
	return err
}

// Delete removes some of a user's key pairs by name; each must exist.
func (e *KeyPair) Delete(args *structs.KeyPairDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("KeyPair.Delete", args, args, reply); done {
		return err
	}
	if args.UserID == "" || len(args.Names) == 0 {
		return structs.Errorf(structs.KindInvalid, "user id and key pair names are required")
	}
	state := e.srv.fsm.State()
	for _, name := range args.Names {
		kp, err := state.KeyPair(nil, args.UserID, name)
		if err != nil {
			return err
		}
		if kp == nil {
			return structs.Errorf(structs.KindNotFound, "key pair %q not found", name)
		}
	}
	index, err := e.srv.apply(structs.KeyPairDeleteRequestType, &structs.KeyPairDeleteRequest{UserID: args.UserID, Names: args.Names})
	reply.Index = index
	return err
}
