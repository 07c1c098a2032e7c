package structs

// ClusterCA is the certificate authority the cluster made for itself when
// no CA key is configured: the leader generates it outside the FSM and
// commits it, so every server answers os-certificates from the same root.
// Its private key lives only in the servers' replicated state.
type ClusterCA struct {
	// ID is always ClusterCAID: there is one cluster CA.
	ID string
	// CertPEM and KeyPEM are the CA certificate and its private key.
	CertPEM []byte
	KeyPEM  []byte
	// CreatedAt is unix nanoseconds, chosen before proposal.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// ClusterCAID is the ID of the one ClusterCA record.
const ClusterCAID = "cluster"

// ClusterCASetRequest is the ClusterCASetType entry: store the cluster CA
// unless one is stored already (the first proposal wins, so two leaders
// racing in turn cannot replace a root users already trust).
type ClusterCASetRequest struct {
	CA *ClusterCA
	WriteRequest
}

// CARootRequest asks CA.Root for the root certificate. It is a write
// request because the leader creates the cluster CA on first use.
type CARootRequest struct {
	WriteRequest
}

// CARootResponse answers CA.Root: the root certificate in PEM.
type CARootResponse struct {
	CertPEM []byte
}

// CAIssueUserRequest asks CA.IssueUser for a key pair and a certificate
// for a user of a project (Nova's POST /os-certificates).
type CAIssueUserRequest struct {
	ProjectID string
	UserID    string
	WriteRequest
}

// CAIssueUserResponse carries the new certificate and its private key.
type CAIssueUserResponse struct {
	CertPEM []byte
	KeyPEM  []byte
}

// KeyringRequest is Operator.GossipKeyring: op is list, install, use or
// remove; Key is the base64 key (not for list).
type KeyringRequest struct {
	Op  string
	Key string
	WriteRequest
}

// KeyringResponse sums up a keyring operation across the gossip pool.
type KeyringResponse struct {
	// Members asked and Responses received (the answering server
	// included).
	Members, Responses int
	// Errors maps a member to its failure.
	Errors map[string]string
	// Keys counts the members holding each key; PrimaryKeys those
	// encrypting with it.
	Keys        map[string]int
	PrimaryKeys map[string]int
}
