package server

import (
	"crypto/ed25519"
	"time"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

// IssueToken authenticates a user (method password) or an application
// credential (method application_credential), or exchanges a token the
// servers verify themselves (method token), and answers a token
// signed with the newest signing key, with its claims. Only servers hold
// the private keys, so only they mint tokens.
func (e *Identity) IssueToken(args *structs.TokenIssueRequest, reply *structs.TokenIssueResponse) error {
	if done, err := e.srv.forward("Identity.IssueToken", args, args, reply); done {
		return err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	ttl := args.TTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	ttl = min(ttl, structs.MaxTokenTTL)
	claims := &structs.TokenClaims{Methods: []string{args.Method}, IssuedAt: now, ExpiresAt: now.Add(ttl)}
	auth := &structs.IdentityAuthRequest{Method: args.Method,
		ProjectID: args.ProjectID, ProjectName: args.ProjectName,
		ProjectDomainID: args.ProjectDomainID, ProjectDomainName: args.ProjectDomainName}
	switch args.Method {
	case "password":
		auth.UserID, auth.UserName, auth.Password = args.UserID, args.UserName, args.Password
		auth.UserDomainID, auth.UserDomainName = args.UserDomainID, args.UserDomainName
	case "token":
		orig, err := e.srv.VerifyToken(args.Token)
		if err != nil {
			return err
		}
		if !exchangeable(orig) {
			return structs.Errorf(structs.KindPermission, "a token of method %v cannot be exchanged", orig.Methods)
		}
		auth.UserID = orig.UserID
		// An exchanged token never outlives the one it came from.
		claims.ExpiresAt, claims.ParentAuditID = orig.ExpiresAt, orig.AuditID
	case structs.AppCredTokenMethod:
		return e.issueAppCredToken(args, claims, reply)
	default:
		return structs.Errorf(structs.KindInvalid, "authentication method %q is not supported", args.Method)
	}
	var resp structs.IdentityAuthResponse
	if err := e.srv.authenticateUser(auth, &resp); err != nil {
		return err
	}
	return e.sign(claims, &resp, reply)
}

// issueAppCredToken authenticates an application credential and signs
// a token scoped to its project with its roles, which never outlives
// the credential. A scope in the request is not looked at: Keystone's
// is the credential's.
func (e *Identity) issueAppCredToken(args *structs.TokenIssueRequest, claims *structs.TokenClaims, reply *structs.TokenIssueResponse) error {
	var resp structs.IdentityAuthResponse
	c, err := e.srv.authenticateAppCred(args, &resp)
	if err != nil {
		return err
	}
	if c.ExpiresAt != 0 && claims.ExpiresAt.UnixNano() > c.ExpiresAt {
		claims.ExpiresAt = time.Unix(0, c.ExpiresAt).UTC().Truncate(time.Microsecond)
	}
	claims.AppCredID, claims.AppCredName, claims.AppCredRestricted = c.ID, c.Name, !c.Unrestricted
	return e.sign(claims, &resp, reply)
}

// sign fills a token's user, project and roles from an authentication
// and signs it with the newest signing key.
func (e *Identity) sign(claims *structs.TokenClaims, resp *structs.IdentityAuthResponse, reply *structs.TokenIssueResponse) error {
	claims.UserID, claims.UserName, claims.DomainID = resp.User.ID, resp.User.Name, resp.User.DomainID
	if p := resp.Project; p != nil {
		claims.ProjectID, claims.ProjectName, claims.ProjectDomainID = p.ID, p.Name, p.DomainID
		for _, role := range resp.Roles {
			claims.Roles = append(claims.Roles, role.Name)
			claims.RoleIDs = append(claims.RoleIDs, role.ID)
		}
	}
	// Right after the first election the leader is still creating the
	// signing key: wait for it rather than refuse.
	key, err := e.srv.awaitSigningKey("Identity.IssueToken")
	if err != nil {
		return err
	}
	claims.AuditID = authtoken.NewAuditID()
	tok, err := authtoken.Sign(key.ID, ed25519.PrivateKey(key.Secret), claims)
	if err != nil {
		return structs.Errorf(structs.KindInternal, "sign token: %v", err)
	}
	reply.Token, reply.Claims = tok, claims
	return nil
}

// VerifyToken checks a token's signature against the replicated signing
// keys, its expiry and the replicated revocation list, and returns its
// claims. Every failure is a *structs.Error of KindPermission.
func (s *Server) VerifyToken(raw string) (*structs.TokenClaims, error) {
	state := s.fsm.State()
	keys, err := state.SigningKeys(nil)
	if err != nil {
		return nil, err
	}
	claims, err := authtoken.Verify(raw, func(id string) (ed25519.PublicKey, bool) {
		for _, k := range keys {
			if k.ID == id && usableSigningKey(k) {
				return ed25519.PublicKey(k.PublicKey), true
			}
		}
		return nil, false
	})
	if err != nil {
		return nil, err
	}
	revoked, err := state.RevokedTokens(nil)
	if err != nil {
		return nil, err
	}
	for _, r := range revoked {
		if r.Revokes(claims) {
			return nil, structs.Errorf(structs.KindPermission, "token has been revoked")
		}
	}
	return claims, nil
}

// usableSigningKey reports whether a key is an Ed25519 pair; keys of the
// older HMAC format are not.
func usableSigningKey(k *structs.SigningKey) bool {
	return len(k.PublicKey) == ed25519.PublicKeySize && len(k.Secret) == ed25519.PrivateKeySize
}

// newestSigningKey is the usable key that signs new tokens, nil if none.
func newestSigningKey(keys []*structs.SigningKey) *structs.SigningKey {
	var newest *structs.SigningKey
	for _, k := range keys {
		if !usableSigningKey(k) {
			continue
		}
		if newest == nil || k.CreatedAt > newest.CreatedAt || (k.CreatedAt == newest.CreatedAt && k.ID > newest.ID) {
			newest = k
		}
	}
	return newest
}

// publicSigningKeys copies the usable keys without their private half,
// for Identity.List: the private keys never leave the servers.
func publicSigningKeys(keys []*structs.SigningKey) []*structs.SigningKey {
	out := make([]*structs.SigningKey, 0, len(keys))
	for _, k := range keys {
		if !usableSigningKey(k) {
			continue
		}
		c := *k
		c.Secret = nil
		out = append(out, &c)
	}
	return out
}
