package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// agentLogs answers the agent's recent log lines (its in-memory buffer,
// agent.LogBuffer) as text, oldest first: what `cloudctl operator debug`
// captures of each server. Admins only: logs name users, instances and
// addresses.
func (a *API) agentLogs(w http.ResponseWriter, _ *request) (any, error) {
	if a.cfg.Logs == nil {
		return nil, structs.Errorf(structs.KindNotFound, "this agent keeps no log buffer: read its log_file or stderr")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(a.cfg.Logs())
	return nil, nil
}
