package structs

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Console types, as Nova names them (the `type` of a remote console).
const (
	ConsoleTypeNoVNC  = "novnc"
	ConsoleTypeXVPVNC = "xvpvnc"
	ConsoleTypeSerial = "serial"
)

// ConsoleTokenTTL is how long a console token stays usable by default
// (Nova's [consoleauth] token_ttl).
const ConsoleTokenTTL = 10 * time.Minute

// ConsoleTokenMaxTTL bounds the TTL a caller may ask for.
const ConsoleTokenMaxTTL = 24 * time.Hour

// ConsoleAuthToken authorizes one connection to one instance's console
// (Nova's consoleauth role). Only the token's SHA-256 is stored: the
// token itself is handed to the caller once. A token is consumed by the
// proxy that uses it, so it connects once.
type ConsoleAuthToken struct {
	// TokenHash is the hex SHA-256 of the token (HashConsoleToken).
	TokenHash  string
	InstanceID string
	// ConsoleType is novnc, xvpvnc or serial.
	ConsoleType string
	// HostID is the host whose agent proxies the console; only that
	// agent may consume the token.
	HostID string
	// Target is where the console listens, as the host's agent reaches
	// it: "host:port" of a VNC server, or a path (a serial pty or unix
	// socket).
	Target string
	// CreatedAt and ExpiresAt are unix nanoseconds chosen before the
	// entry is proposed.
	CreatedAt int64
	ExpiresAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (t *ConsoleAuthToken) Copy() *ConsoleAuthToken {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// Expired reports whether the token is past its expiry at now (unix
// nanoseconds).
func (t *ConsoleAuthToken) Expired(now int64) bool { return now >= t.ExpiresAt }

// Validate checks a token before it is stored.
func (t *ConsoleAuthToken) Validate() error {
	if len(t.TokenHash) != sha256.Size*2 {
		return Errorf(KindInvalid, "console token hash must be a hex SHA-256")
	}
	if t.InstanceID == "" || t.HostID == "" || t.Target == "" {
		return Errorf(KindInvalid, "console token needs an instance, a host and a target")
	}
	if !ValidConsoleType(t.ConsoleType) {
		return Errorf(KindInvalid, "console type %q is not one of novnc, xvpvnc, serial", t.ConsoleType)
	}
	if t.ExpiresAt <= t.CreatedAt {
		return Errorf(KindInvalid, "console token expires before it is created")
	}
	return nil
}

// ValidConsoleType reports whether t is a console type Stratus proxies.
func ValidConsoleType(t string) bool {
	return t == ConsoleTypeNoVNC || t == ConsoleTypeXVPVNC || t == ConsoleTypeSerial
}

// ConsoleProtocol is the protocol behind a console type: vnc or serial.
func ConsoleProtocol(consoleType string) string {
	if consoleType == ConsoleTypeSerial {
		return "serial"
	}
	return "vnc"
}

// HashConsoleToken is how a console token is stored and looked up.
func HashConsoleToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ConsoleTokenCreateEntry is the Raft entry that stores a new token.
type ConsoleTokenCreateEntry struct {
	Token *ConsoleAuthToken
}

// ConsoleTokenConsumeEntry is the Raft entry that uses up a token
// (TokenHash set), or purges every expired token and every token of an
// instance that is gone (Purge set). Now is the proposer's clock.
type ConsoleTokenConsumeEntry struct {
	TokenHash string
	// ConsoleType and HostID, when set, must match the token's.
	ConsoleType string
	HostID      string
	Purge       bool
	Now         int64
}

// ConsoleAuthorizeRequest asks for a token to a console of an instance
// on the caller's host.
type ConsoleAuthorizeRequest struct {
	InstanceID  string
	ConsoleType string
	HostID      string
	Target      string
	// TTL is the token's lifetime; zero is ConsoleTokenTTL.
	TTL time.Duration
	WriteRequest
}

// ConsoleAuthorizeResponse carries the token, which is never stored.
type ConsoleAuthorizeResponse struct {
	Token     string
	ExpiresAt int64
	WriteMeta
}

// ConsoleConsumeRequest checks a token and uses it up; ConsoleType and
// HostID must match the token's.
type ConsoleConsumeRequest struct {
	Token       string
	ConsoleType string
	HostID      string
	WriteRequest
}

// ConsoleTokenRequest reads a token without using it
// (os-console-auth-tokens).
type ConsoleTokenRequest struct {
	Token string
	QueryOptions
}

// ConsoleTokenResponse answers ConsoleConsumeRequest and
// ConsoleTokenRequest.
type ConsoleTokenResponse struct {
	Token *ConsoleAuthToken
	QueryMeta
}
