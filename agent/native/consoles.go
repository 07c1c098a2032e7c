package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// The routes about an instance's console and guest, and a host's
// uptime, are the console and guest services' (agent/console,
// agent/guest): they answer on the agent that hosts the instance or runs
// the host, and forward from any other. They read the route's
// parameters as the request's PathValues and may write their own
// answers.

func (a *API) consoleOutput(w http.ResponseWriter, q *request) (any, error) {
	if a.cfg.Consoles == nil {
		return nil, noService("console output")
	}
	return a.cfg.Consoles.HandleOutput(w, q.Request)
}

func (a *API) consoleOpen(w http.ResponseWriter, q *request) (any, error) {
	if a.cfg.Consoles == nil {
		return nil, noService("consoles")
	}
	return a.cfg.Consoles.HandleOpen(w, q.Request)
}

// instanceDiagnostics answers GET /v1/instances/{id}/diagnostics: the
// hypervisor's counters of a running instance (virt.Diagnostics), from
// the agent that hosts it.
func (a *API) instanceDiagnostics(w http.ResponseWriter, q *request) (any, error) {
	if a.cfg.Consoles == nil {
		return nil, noService("instance diagnostics")
	}
	return a.cfg.Consoles.HandleDiagnostics(w, q.Request)
}

func (a *API) adminPassword(w http.ResponseWriter, q *request) (any, error) {
	if a.cfg.Guests == nil {
		return nil, noService("guest passwords")
	}
	return a.cfg.Guests.HandlePassword(w, q.Request)
}

func (a *API) hostUptime(w http.ResponseWriter, q *request) (any, error) {
	if a.cfg.Guests == nil {
		return nil, noService("host uptimes")
	}
	return a.cfg.Guests.HandleUptime(w, q.Request)
}

// noService is the error of a route whose service this agent does not
// run.
func noService(what string) error {
	return structs.Errorf(structs.KindUnavailable, "this agent serves no %s", what)
}
