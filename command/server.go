package command

import (
	"flag"
	"io"
	"sort"
)

var serverMembersCommand = (&spec{
	synopsis: "List the servers of the gossip pool",
	args:     "[options]",
	help:     "List the members of the gossip pool as the agent sees them, and which one is the Raft leader.",
	nargs:    exactly(0),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			resp, err := e.client.Agent().Members()
			if err != nil {
				return e.fail("Error querying servers: %v", err)
			}
			sort.SliceStable(resp.Members, func(i, j int) bool { return resp.Members[i].Name < resp.Members[j].Name })
			return e.render(resp, func(w io.Writer) {
				rows := make([][]string, 0, len(resp.Members))
				for _, m := range resp.Members {
					rows = append(rows, []string{m.Name, m.Addr, itoa(m.Port), m.Status,
						btoa(m.Leader), m.Role, m.Region, m.AZ, m.Version})
				}
				printTable(w, []string{"Name", "Address", "Port", "Status", "Leader", "Role", "Region", "AZ", "Version"}, rows)
			})
		}
	},
}).factory()
