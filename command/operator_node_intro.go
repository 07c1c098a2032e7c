package command

import (
	"flag"
	"fmt"
	"io"
	"time"
)

func init() {
	register("operator node-intro create", nodeIntroCreateCommand)
}

var nodeIntroCreateCommand = (&spec{
	synopsis: "Issue a node introduction token for a new client agent",
	args:     "[options]",
	help: `Issue a node introduction token, as "nomad node intro create" does. With
ACLs on, the servers register a host they do not know yet only when its
agent presents one: put it in the client agent's configuration
(client { intro_token = "..." } or intro_token_file) or in its
environment (STRATUS_INTRO_TOKEN) before it starts. Once registered, the
host's agent authenticates with its own node secret; the token is not
needed again. An agent that also runs a server introduces its own hosts.

The token is signed by the cluster's token signing key, expires after
-ttl (default 1h, at most 168h) and, with -host, introduces only the
host of that name; without -host it introduces any new host until it
expires. Revoke it sooner as any token. The token is printed alone on a
line (or in -json), so scripts can capture it. Requires an admin token.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		ttl := fs.Duration("ttl", time.Hour, "How long the token may introduce hosts.")
		host := fs.String("host", "", "The only host name the token introduces (default: any new host).")
		return func(e *env, _ []string) int {
			if *ttl <= 0 {
				return e.usage("-ttl must be positive")
			}
			out, err := e.client.Operator().NodeIntroCreate(*ttl, *host)
			if err != nil {
				return e.fail("Error creating a node introduction: %v", err)
			}
			return e.render(out, func(w io.Writer) {
				fmt.Fprintln(w, out.Token)
			})
		}
	},
}).factory()
