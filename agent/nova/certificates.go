package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const certificateRule = "os_compute_api:os-certificates:"

// certificateRoutes are Nova's os-certificates API (nova-cert's), which
// answers from the cluster's certificate authority. Upstream Nova removed
// it in Pike without a microversion bound; Stratus serves it at every
// microversion for the clients that still use it.
func (a *API) certificateRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "POST /os-certificates", Access: anyone, Policy: certificateRule + "create", Handle: a.certificateCreate},
		{Pattern: "GET /os-certificates/{id}", Access: anyone, Policy: certificateRule + "show", Handle: a.certificateShow},
	}
}

// certificateCreate answers POST /os-certificates: a new key pair and a
// certificate for the caller, signed by the CA. The private key is
// returned once and kept nowhere.
func (a *API) certificateCreate(q *request) (*reply, error) {
	var out structs.CAIssueUserResponse
	args := &structs.CAIssueUserRequest{ProjectID: q.token.ProjectID, UserID: q.token.UserID}
	if err := q.call("CA.IssueUser", args, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"certificate": map[string]any{
		"data":        string(out.CertPEM),
		"private_key": string(out.KeyPEM),
	}})
}

// certificateShow answers GET /os-certificates/root with the CA's
// certificate; any other id is Nova's 501.
func (a *API) certificateShow(q *request) (*reply, error) {
	if q.param("id") != "root" {
		return nil, faultf(http.StatusNotImplemented, "Only root certificate can be retrieved.")
	}
	var out structs.CARootResponse
	if err := q.call("CA.Root", &structs.CARootRequest{}, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"certificate": map[string]any{
		"data":        string(out.CertPEM),
		"private_key": nil,
	}})
}
