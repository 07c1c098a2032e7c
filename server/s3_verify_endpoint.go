package server

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

// S3 and EC2 request authentication. The servers, not the agents, check an S3
// request's AWS Signature Version 4, as Keystone's s3tokens API does for
// swift3: the agent sends the canonical request, the credential scope
// and the signature; the server derives the signing key from the
// credential's secret, which never leaves the servers, and answers the
// credential's user and project and a token of that user, valid for
// minutes and only on the S3 store (method structs.S3TokenMethod). The
// agent makes every call of the request with that token, so the hook
// confines it to the credential's project.
//
// Why this design: the proof the servers check is the user's own
// signature. An agent's node secret, or a stolen one, proves nothing
// about any user: S3.Verify is public (the signature is the credential)
// and no S3 method or stream admits node secrets, so whoever holds only a
// node secret reaches no bucket. Passing the access key with the
// agent's word for it (the old S3.Auth, which also answered the secret
// to any agent) trusted every agent with every user's objects; a token
// minted per request keeps the agent a relay. The derived signing key is
// handed out only for chunk-signed uploads, whose chunks the agent must
// check as they stream, and it is scoped to a day, a region and S3.

const (
	// s3TokenTTL bounds an S3 request's token: the request's RPCs and
	// the opening of its streams happen within it.
	s3TokenTTL = 15 * time.Minute
	// s3MaxSkew is how far a header-signed request's date may be from the
	// server's clock; s3MaxPresign a presigned URL's longest life.
	s3MaxSkew    = 15 * time.Minute
	s3MaxPresign = 7 * 24 * time.Hour
	s3Algorithm  = "AWS4-HMAC-SHA256"
	s3DateFormat = "20060102T150405Z"
)

// s3SignatureMismatch is S3's answer to a wrong signature.
func s3SignatureMismatch() error {
	return structs.S3Errorf(structs.KindPermission, structs.S3ErrSignatureDoesNotMatch,
		"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
}

// s3InvalidAccessKey is S3's answer to an unknown or unusable key.
func s3InvalidAccessKey() error {
	return structs.S3Errorf(structs.KindPermission, structs.S3ErrInvalidAccessKeyID,
		"The AWS Access Key Id you provided does not exist in our records.")
}

// Verify checks an S3 request's signature and answers who it acts as,
// with a token for its calls (see above).
func (e *S3) Verify(args *structs.S3VerifyRequest, reply *structs.S3VerifyResponse) error {
	if done, err := e.srv.forward("S3.Verify", args, args, reply); done {
		return err
	}
	state := e.srv.fsm.State()
	cred, userName, roles, err := s3Identity(state, args.Access)
	if err != nil {
		return err
	}
	if args.Service != "s3" && args.Service != "ec2" || !strings.HasPrefix(args.AmzDate, args.ScopeDate) || len(args.ScopeDate) != 8 {
		return s3SignatureMismatch()
	}
	key := s3SigningKey(cred.Secret, args.ScopeDate, args.Region, args.Service)
	sum := sha256.Sum256([]byte(args.CanonicalRequest))
	toSign := s3Algorithm + "\n" + args.AmzDate + "\n" + args.ScopeDate + "/" + args.Region + "/" + args.Service +
		"/aws4_request\n" + hex.EncodeToString(sum[:])
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(toSign))
	got, err := hex.DecodeString(args.Signature)
	if err != nil || !hmac.Equal(mac.Sum(nil), got) {
		return s3SignatureMismatch()
	}
	if err := s3CheckTime(args, time.Now().UTC()); err != nil {
		return err
	}
	reply.Access, reply.UserID, reply.UserName, reply.ProjectID, reply.Roles = cred.Access, cred.UserID, userName, cred.ProjectID, roles
	if args.Service == "s3" && s3ChunkSigned(args.CanonicalRequest) {
		reply.SigningKey = key
	}
	method := structs.S3TokenMethod
	if args.Service == "ec2" {
		method = structs.EC2TokenMethod
	}
	reply.Token, err = e.srv.s3Token(cred, userName, roles, method)
	return err
}

// s3Identity resolves an access key: the credential, its user's name
// and the user's roles on the credential's project. A key that is
// unknown, or whose user or project is disabled or gone, or whose user
// has no role left on the project, is InvalidAccessKeyId.
func s3Identity(state *fsm.StateStore, access string) (*structs.EC2Credential, string, []string, error) {
	c, err := state.EC2CredentialByAccess(nil, access)
	if err != nil || c == nil {
		return nil, "", nil, firstErr(err, s3InvalidAccessKey())
	}
	user, err := state.UserByID(nil, c.UserID)
	if err != nil || user == nil || !user.Enabled {
		return nil, "", nil, firstErr(err, s3InvalidAccessKey())
	}
	project, err := state.ProjectByID(nil, c.ProjectID)
	if err != nil || project == nil || !project.Enabled {
		return nil, "", nil, firstErr(err, s3InvalidAccessKey())
	}
	grants, err := state.Assignments(nil, c.UserID, c.ProjectID, "")
	if err != nil {
		return nil, "", nil, err
	}
	var roles []string
	for _, g := range grants {
		if r, err := state.RoleByID(nil, g.RoleID); err == nil && r != nil {
			roles = append(roles, strings.ToLower(r.Name))
		}
	}
	if len(roles) == 0 {
		return nil, "", nil, s3InvalidAccessKey()
	}
	return c, user.Name, roles, nil
}

// s3SigningKey derives SigV4's signing key of a scope from a secret.
func s3SigningKey(secret, date, region, service string) []byte {
	k := []byte("AWS4" + secret)
	for _, part := range []string{date, region, service, "aws4_request"} {
		mac := hmac.New(sha256.New, k)
		mac.Write([]byte(part))
		k = mac.Sum(nil)
	}
	return k
}

// s3CheckTime refuses a header-signed request whose date is too far
// from now, and a presigned one that expired or is not valid yet; a
// presigned request's date and expiry are read from its canonical query,
// which the signature covers.
func s3CheckTime(args *structs.S3VerifyRequest, now time.Time) error {
	at, err := time.Parse(s3DateFormat, args.AmzDate)
	if err != nil {
		return s3SignatureMismatch()
	}
	if !args.Presigned {
		if d := now.Sub(at); d > s3MaxSkew || d < -s3MaxSkew {
			return structs.S3Errorf(structs.KindPermission, structs.S3ErrRequestTimeTooSkewed,
				"The difference between the request time and the server's time is too large.")
		}
		return nil
	}
	lines := strings.SplitN(args.CanonicalRequest, "\n", 4)
	if len(lines) < 4 {
		return s3SignatureMismatch()
	}
	query, err := url.ParseQuery(lines[2])
	if err != nil || query.Get("X-Amz-Date") != args.AmzDate {
		return s3SignatureMismatch()
	}
	secs, err := strconv.ParseInt(query.Get("X-Amz-Expires"), 10, 64)
	if err != nil || secs < 0 || time.Duration(secs)*time.Second > s3MaxPresign {
		return structs.S3Errorf(structs.KindPermission, structs.S3ErrAuthQueryMalformed,
			"X-Amz-Expires must be a number of seconds less than a week.")
	}
	if now.Before(at.Add(-s3MaxSkew)) {
		return structs.S3Errorf(structs.KindPermission, structs.S3ErrAccessDenied, "Request is not valid yet")
	}
	if now.After(at.Add(time.Duration(secs) * time.Second)) {
		return structs.S3Errorf(structs.KindPermission, structs.S3ErrAccessDenied, "Request has expired")
	}
	return nil
}

// s3ChunkSigned reports whether a canonical request's payload is
// streamed with chunk signatures (its last line, the payload hash).
func s3ChunkSigned(canonical string) bool {
	payload := canonical[strings.LastIndexByte(canonical, '\n')+1:]
	return payload == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" || payload == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
}

// s3Token signs a token of a credential's user on its project, with
// method: S3TokenMethod reaches the S3 store only; EC2TokenMethod (an EC2
// Query API request) what the user's own tokens reach, as Keystone's
// ec2tokens answers a full token. "" with ACLs off while no signing key exists (nothing
// checks it then).
func (s *Server) s3Token(c *structs.EC2Credential, userName string, roles []string, method string) (string, error) {
	keys, err := s.fsm.State().SigningKeys(nil)
	if err != nil {
		return "", err
	}
	key := newestSigningKey(keys)
	if key == nil {
		if !s.aclEnabled() {
			return "", nil
		}
		// Right after a new cluster's first election: wait for the key
		// the leader creates first, as the other token paths do.
		if key, err = s.awaitSigningKey("S3.Verify"); err != nil {
			return "", err
		}
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	claims := &structs.TokenClaims{UserID: c.UserID, UserName: userName, ProjectID: c.ProjectID,
		Roles: slices.Clone(roles), Methods: []string{method}, IssuedAt: now,
		ExpiresAt: now.Add(s3TokenTTL), AuditID: authtoken.NewAuditID()}
	tok, err := authtoken.Sign(key.ID, ed25519.PrivateKey(key.Secret), claims)
	if err != nil {
		return "", structs.Errorf(structs.KindInternal, "sign an S3 request's token: %v", err)
	}
	return tok, nil
}
