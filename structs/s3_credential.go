package structs

// EC2Credential is an EC2-style credential (Keystone's OS-EC2): an
// access key and its secret, issued to a user for one project. The S3
// API authenticates requests signed (AWS Signature Version 4) with the
// secret as the user on that project. The secret is kept in state, as
// Keystone keeps it in its database; only the user and admins read it.
type EC2Credential struct {
	// Access is the access key id, unique.
	Access string
	Secret string
	UserID string
	// ProjectID is the project the credential acts on (Keystone's
	// tenant_id).
	ProjectID string
	// CreatedAt is unix nanoseconds, chosen before proposal.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// EC2CredentialEntry creates or deletes a credential (EC2CredentialType).
type EC2CredentialEntry struct {
	Op         string
	Credential *EC2Credential
	// Access names the credential to delete.
	Access string
}

// EC2CredentialCreateRequest issues a credential; the server chooses the
// access key and secret before proposal.
type EC2CredentialCreateRequest struct {
	UserID    string
	ProjectID string
	WriteRequest
}

// EC2CredentialDeleteRequest deletes a credential of UserID.
type EC2CredentialDeleteRequest struct {
	UserID string
	Access string
	WriteRequest
}

// EC2CredentialListRequest lists the credentials of UserID, or reads one
// by Access (UserID then optional).
type EC2CredentialListRequest struct {
	UserID string
	Access string
	QueryOptions
}

// EC2CredentialListResponse carries credentials.
type EC2CredentialListResponse struct {
	Credentials []*EC2Credential
	QueryMeta
}

// EC2CredentialResponse answers a create.
type EC2CredentialResponse struct {
	Credential *EC2Credential
	WriteMeta
}
