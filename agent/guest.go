package agent

import (
	"net/http"

	"github.com/stratus-cloud/stratus/agent/guest"
	"github.com/stratus-cloud/stratus/policy"
)

// startGuests starts the guest service: changePassword and hypervisor
// uptime on the hosts this agent runs, forwarding for the others.
func (a *Agent) startGuests() {
	a.guests = guest.New(guest.Config{RPC: a.self, Local: a.localDriver, AgentAddr: a.agentHTTPAddr,
		Logger: a.logger.Named("guest")})
}

// guestRoutes are the native API's routes of the guest service; other
// agents forward to them.
func (a *Agent) guestRoutes() []route {
	return []route{
		{"POST /v1/instances/{id}/admin-password", policy.Member, func(w http.ResponseWriter, r *http.Request) (any, error) {
			return a.guests.HandlePassword(w, r)
		}},
		{"GET /v1/hosts/{id}/uptime", policy.Admin, func(w http.ResponseWriter, r *http.Request) (any, error) {
			return a.guests.HandleUptime(w, r)
		}},
	}
}
