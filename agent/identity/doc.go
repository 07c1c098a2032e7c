// Package identity serves Stratus's Keystone-compatible HTTP API (a
// subset of Identity v3: version discovery, token issue, validation and
// revocation, the service catalog, the admin APIs for projects, users,
// roles, role assignments and the one domain, and users' application
// credentials), and verifies tokens. It never signs them: the servers
// do (Identity.IssueToken), and never sees a credential's stored hash.
//
// The package holds no state of its own: projects, users, roles,
// passwords and application credentials live in the servers' Raft state and are reached through the
// Identity RPC endpoint. Tokens are stateless: "v2." + key id + "." +
// base64url(JSON payload) + "." + base64url(Ed25519 signature)
// (internal/authtoken), signed by a server with the private half of a
// key the leader created, so any agent validates any token without a
// round trip, with the public half. The public keys and the revocations
// are cached here and kept fresh by background blocking queries
// (Identity.List kinds signing_keys and revoked); a token revoked through this agent fails its Verify at
// once, on other agents as soon as their blocking query returns.
//
// The agent mounts Handler at MountPath; its routes are one declarative
// table (routes.go) built with internal/route, each stating who may call
// it. The Nova, Image and Network APIs authenticate their requests with
// Verify.
package identity
