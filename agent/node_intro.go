package agent

import (
	"os"
	"strings"
	"time"
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
