package agent

import (
	"time"

	"github.com/stratus-cloud/stratus/agent/guest"
)

// startGuests starts the guest service: changePassword and hypervisor
// uptime on the hosts this agent runs, forwarding for the others.
func (a *Agent) startGuests() {
	a.guests = guest.New(guest.Config{RPC: a.self, Local: a.localDriver, AgentAddr: a.agentHTTPAddr,
		Logger: a.logger.Named("guest"), Client: a.internodeClient(60 * time.Second), Scheme: a.httpScheme()})
}
