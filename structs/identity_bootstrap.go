package structs

// IdentityBootstrapRequest asks for the cluster's first administrator
// (Identity.Bootstrap). It succeeds once: while no user exists.
type IdentityBootstrapRequest struct {
	WriteRequest
}

// IdentityBootstrapResponse is the first administrator: its user and
// project and the password the server generated, shown only here.
type IdentityBootstrapResponse struct {
	UserID      string
	UserName    string
	Password    string
	ProjectID   string
	ProjectName string
	DomainID    string
	WriteMeta
}
