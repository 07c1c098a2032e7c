package console

import (
	"context"
	"net/http"
	"net/url"

	"github.com/stratus-cloud/stratus/virt"
)

// Diagnostics returns a RUNNING instance's hypervisor diagnostics from
// the agent that hosts it (this one's driver, or by forwarding, as
// console output does). A driver without diagnostics is
// TypeNotSupported; an instance not running, or not on a host,
// TypeNotReady.
func (s *Service) Diagnostics(ctx context.Context, instanceID string) (*virt.Diagnostics, error) {
	p, err := s.locate(ctx, instanceID)
	if err != nil {
		return nil, err
	}
	if p.driver == nil {
		var out virt.Diagnostics
		u := s.cfg.Scheme + "://" + p.addr + "/v1/instances/" + url.PathEscape(instanceID) + "/diagnostics"
		if err := s.forward(ctx, http.MethodGet, u, nil, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	return localDiagnostics(ctx, p.driver, instanceID)
}

func localDiagnostics(ctx context.Context, drv virt.Driver, instanceID string) (*virt.Diagnostics, error) {
	dg, ok := drv.(virt.Diagnoser)
	if !ok {
		return nil, notSupported("the %s driver has no diagnostics", drv.Name())
	}
	out, err := dg.Diagnostics(ctx, instanceID)
	if err != nil {
		return nil, driverError(err, instanceID)
	}
	return out, nil
}

// HandleDiagnostics answers GET /v1/instances/{id}/diagnostics with
// virt.Diagnostics as JSON. Like HandleOutput it writes its own answers.
func (s *Service) HandleDiagnostics(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	var out *virt.Diagnostics
	var err error
	if r.Header.Get(forwardedHeader) != "" {
		out, err = s.diagnosticsHere(r.Context(), id)
	} else {
		out, err = s.Diagnostics(r.Context(), id)
	}
	if err != nil {
		writeErr(w, err)
		return nil, nil
	}
	writeJSON(w, http.StatusOK, out)
	return nil, nil
}

// diagnosticsHere answers a forwarded request from this agent's hosts
// only.
func (s *Service) diagnosticsHere(ctx context.Context, id string) (*virt.Diagnostics, error) {
	p, err := s.locate(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.driver == nil {
		return nil, notReady("instance %s is not on this agent's hosts", id)
	}
	return localDiagnostics(ctx, p.driver, id)
}
