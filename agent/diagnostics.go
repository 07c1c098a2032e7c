package agent

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// instanceDiagnostics answers GET /v1/instances/{id}/diagnostics: the
// hypervisor's counters of a running instance (virt.Diagnostics), from
// the agent that hosts it — found and forwarded to as console output is
// (agent/console).
func (a *Agent) instanceDiagnostics(w http.ResponseWriter, r *http.Request) (any, error) {
	if a.consoles == nil {
		return nil, structs.Errorf(structs.KindUnavailable, "this agent serves no instance diagnostics")
	}
	return a.consoles.HandleDiagnostics(w, r)
}
