package structs

// S3TokenMethod is the authentication method of the tokens S3.Verify
// issues (Keystone's name for tokens from EC2 credentials). The servers
// admit such a token only on the S3 store's methods and streams.
const S3TokenMethod = "ec2credential"

// EC2TokenMethod is the authentication method of the tokens S3.Verify
// issues for a request signed for service "ec2" (the EC2 Query API, as
// Keystone's ec2tokens API answers euca2ools): a token of the
// credential's user on its project, admitted where that user's own
// tokens are, never exchangeable for another.
const EC2TokenMethod = "ec2signature"

// S3VerifyRequest asks the servers to check an S3 (Service "s3") or EC2
// (Service "ec2") request's AWS
// Signature Version 4 against the secret of its access key, as
// Keystone's s3tokens API does for swift3: the agent sends what was
// signed, never learns the secret. AmzDate is the signed request time
// (yyyymmddThhmmssZ); ScopeDate, Region and Service the credential
// scope; CanonicalRequest the SigV4 canonical request the agent built
// from the HTTP request; Signature its hex signature. Presigned says the
// signature came in the query (its X-Amz-Date and X-Amz-Expires are then
// read from the canonical query, which the signature covers).
type S3VerifyRequest struct {
	Access           string
	AmzDate          string
	ScopeDate        string
	Region           string
	Service          string
	CanonicalRequest string
	Signature        string
	Presigned        bool
	QueryOptions
}

// S3VerifyResponse is who a verified request acts as: the credential's
// user (enabled) and project (enabled), the user's role names on it, and
// a short-lived token of that user on that project (method
// S3TokenMethod) for the request's calls. SigningKey, the scope's
// derived key, is given only for a request whose payload is streamed
// with chunk signatures (STREAMING-AWS4-HMAC-SHA256-PAYLOAD…), which the
// agent checks with it; it is worth one day, one region, S3 only.
type S3VerifyResponse struct {
	Access     string
	UserID     string
	UserName   string
	ProjectID  string
	Roles      []string
	Token      string
	SigningKey []byte
	QueryMeta
}

// S3 error codes of request authentication, as Amazon S3 names them.
const (
	S3ErrSignatureDoesNotMatch = "SignatureDoesNotMatch"
	S3ErrRequestTimeTooSkewed  = "RequestTimeTooSkewed"
	S3ErrAuthQueryMalformed    = "AuthorizationQueryParametersError"
)

func init() {
	for _, t := range []string{S3ErrSignatureDoesNotMatch, S3ErrRequestTimeTooSkewed, S3ErrAuthQueryMalformed} {
		errorTypes[t] = true
	}
}
