package agent

import (
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// Node introduction (server/node_intro.go): with ACLs on, the servers
// register a host they do not know only with an introduction token. The
// agent gives its registrations one:
//   - an agent that runs a server (dev mode, a single-node cluster)
//     mints its own, in process: its server may introduce its own hosts;
//   - a client agent uses client { intro_token }, else the file
//     client { intro_token_file } names, else $STRATUS_INTRO_TOKEN. They
//     are read at every registration attempt, so a token supplied after
//     start is used by the next retry.
//
// A host the servers know already registers with its node secret alone.

// IntroTokenEnv is the environment variable a client agent reads its
// introduction token from.
const IntroTokenEnv = "STRATUS_INTRO_TOKEN"

// selfIntroTTL is the life of the introductions an agent mints for its
// own hosts: one registration's.
const selfIntroTTL = 5 * time.Minute

// introToken is the introduction a registration of hostName carries; ""
// for none.
func (a *Agent) introToken(hostName string) string {
	if a.server != nil {
		tok, _, err := a.server.NodeIntroToken(hostName, selfIntroTTL)
		if err == nil {
			return tok
		}
		a.logger.Debug("cannot introduce the agent's own host yet", "host", hostName, "error", err)
	}
	c := a.config.Client
	if c != nil && c.IntroToken != "" {
		return strings.TrimSpace(c.IntroToken)
	}
	if c != nil && c.IntroTokenFile != "" {
		raw, err := os.ReadFile(c.IntroTokenFile)
		if err != nil {
			a.logger.Warn("cannot read the node introduction token", "file", c.IntroTokenFile, "error", err)
			return ""
		}
		return strings.TrimSpace(string(raw))
	}
	return strings.TrimSpace(os.Getenv(IntroTokenEnv))
}

// nodeIntroRoutes is the native API's route to issue introductions.
func (a *Agent) nodeIntroRoutes() []route {
	return []route{{"POST /v1/operator/node-intro", policy.Admin, a.nodeIntroCreate}}
}

// nodeIntroBody is the body of POST /v1/operator/node-intro: a TTL ("1h")
// and the host it is for ("" for any new host).
type nodeIntroBody struct {
	TTL      string
	HostName string
}

// nodeIntroCreate issues an introduction token.
func (a *Agent) nodeIntroCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	var body nodeIntroBody
	if err := decodeJSON(w, r, &body); err != nil {
		return nil, err
	}
	args := structs.NodeIntroCreateRequest{HostName: body.HostName}
	if body.TTL != "" {
		d, err := time.ParseDuration(body.TTL)
		if err != nil {
			return nil, structs.Errorf(structs.KindInvalid, "TTL %q: %v", body.TTL, err)
		}
		args.TTL = d
	}
	args.AuthToken = requestToken(r)
	var out structs.NodeIntroCreateResponse
	if err := a.rpc.RPC("Operator.NodeIntroCreate", &args, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
