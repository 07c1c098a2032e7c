package structs

// Credentialed is an RPC request that carries its caller's credential
// (a user's token, a node secret or a server's credential) in its
// AuthToken field: every request that embeds QueryOptions or
// WriteRequest, and the stream openers with a field of their own. The
// edges stamp it through this interface, never by reflection.
type Credentialed interface {
	// AuthTokenValue is the credential the request carries.
	AuthTokenValue() string
	// SetAuthToken replaces it.
	SetAuthToken(token string)
}

// AuthTokenValue is the caller's credential.
func (q *QueryOptions) AuthTokenValue() string { return q.AuthToken }

// SetAuthToken sets the caller's credential.
func (q *QueryOptions) SetAuthToken(token string) { q.AuthToken = token }

// AuthTokenValue is the caller's credential.
func (w *WriteRequest) AuthTokenValue() string { return w.AuthToken }

// SetAuthToken sets the caller's credential.
func (w *WriteRequest) SetAuthToken(token string) { w.AuthToken = token }

// AuthTokenValue is the caller's credential.
func (r *BlobGetRequest) AuthTokenValue() string { return r.AuthToken }

// SetAuthToken sets the caller's credential.
func (r *BlobGetRequest) SetAuthToken(token string) { r.AuthToken = token }

// AuthTokenValue is the caller's credential.
func (r *BlobPutRequest) AuthTokenValue() string { return r.AuthToken }

// SetAuthToken sets the caller's credential.
func (r *BlobPutRequest) SetAuthToken(token string) { r.AuthToken = token }

// AuthTokenValue is the caller's credential.
func (r *S3PutRequest) AuthTokenValue() string { return r.AuthToken }

// SetAuthToken sets the caller's credential.
func (r *S3PutRequest) SetAuthToken(token string) { r.AuthToken = token }

// AuthTokenValue is the caller's credential.
func (r *S3CompleteRequest) AuthTokenValue() string { return r.AuthToken }

// SetAuthToken sets the caller's credential.
func (r *S3CompleteRequest) SetAuthToken(token string) { r.AuthToken = token }
