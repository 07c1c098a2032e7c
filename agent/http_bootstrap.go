package agent

import (
	"net/http"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// bootstrapRoutes are the routes of the one-time first-admin bootstrap.
// It is public: a cluster without users has no one to authenticate, and
// the FSM refuses it once any user exists.
func (a *Agent) bootstrapRoutes() []route {
	return []route{{"POST /v1/operator/bootstrap", policy.Public, a.operatorBootstrap}}
}

// bootstrapJSON is the answer of POST /v1/operator/bootstrap.
type bootstrapJSON struct {
	UserID      string
	UserName    string
	Password    string
	ProjectID   string
	ProjectName string
	DomainID    string
}

func (a *Agent) operatorBootstrap(w http.ResponseWriter, r *http.Request) (any, error) {
	var out structs.IdentityBootstrapResponse
	if err := a.rpc.RPC("Identity.Bootstrap", &structs.IdentityBootstrapRequest{}, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &bootstrapJSON{UserID: out.UserID, UserName: out.UserName, Password: out.Password,
		ProjectID: out.ProjectID, ProjectName: out.ProjectName, DomainID: out.DomainID}, nil
}
