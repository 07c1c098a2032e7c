package ec2

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/internal/sigv4"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// caller is who a verified request acts as.
type caller struct {
	UserID, ProjectID string
	subject           policy.Subject
}

// authenticate has the servers check the request's SigV4 signature for
// service "ec2" (S3.Verify, shared with the S3 API: the agent never sees
// the secret) and sets the caller and the token its calls carry. The
// agent parses the signature and checks the time first, for EC2's own
// errors without a round trip. Unsigned requests are refused.
func (q *request) authenticate() error {
	sig, signed, err := sigv4.Parse(q.r, "ec2")
	if err != nil {
		return signatureError(err)
	}
	if !signed {
		return ec2Error(codeAuthFailure, "AWS was not able to validate the provided access credentials: the request is not signed (AWS Signature Version 4 is required).")
	}
	// EC2's SDKs do not send x-amz-content-sha256: the payload hash is
	// the body's, and a header that says otherwise is a wrong signature.
	sum := sha256.Sum256(q.body)
	bodyHash := hex.EncodeToString(sum[:])
	if sig.Presigned {
		bodyHash = sigv4.UnsignedPayload
	}
	if sig.PayloadHash != "" && sig.PayloadHash != bodyHash && sig.PayloadHash != sigv4.UnsignedPayload {
		return ec2Error(codeSignatureDoesNotMatch, "The request's x-amz-content-sha256 does not match its body.")
	}
	if sig.PayloadHash == "" {
		sig.PayloadHash = bodyHash
	}
	if err := sig.CheckTime(q.api.now().UTC()); err != nil {
		return signatureError(err)
	}
	var auth structs.S3VerifyResponse
	err = q.api.rpc.RPC("S3.Verify", &structs.S3VerifyRequest{Access: sig.AccessKey, AmzDate: sig.AmzDate.Format(sigv4.DateFormat),
		ScopeDate: sig.Date, Region: sig.Region, Service: sig.Service, CanonicalRequest: sig.CanonicalRequest(q.r),
		Signature: sig.Signature, Presigned: sig.Presigned}, &auth)
	if err != nil {
		return verifyError(err)
	}
	q.token = auth.Token
	route.ObserveCaller(q.r.Context(), auth.UserID, auth.ProjectID)
	q.caller = caller{UserID: auth.UserID, ProjectID: auth.ProjectID,
		subject: policy.Subject{UserID: auth.UserID, ProjectID: auth.ProjectID, Roles: auth.Roles}}
	return nil
}

// signatureError maps a signature the agent refused to EC2's codes.
func signatureError(err error) error {
	var se *sigv4.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code {
	case sigv4.CodeSignatureDoesNotMatch:
		return ec2Error(codeSignatureDoesNotMatch, "%s", se.Message)
	case sigv4.CodeRequestTimeTooSkewed:
		return ec2Error(codeRequestExpired, "Request has expired: the difference between the request time and the current time is too large.")
	case sigv4.CodeAccessDenied:
		if se.Message == "Request has expired" {
			return ec2Error(codeRequestExpired, "Request has expired.")
		}
		return ec2Error(codeAuthFailure, "%s", se.Message)
	}
	return ec2Error(codeIncompleteSignature, "%s", se.Message)
}

// verifyError maps the servers' refusal of a signature to EC2's codes.
func verifyError(err error) error {
	switch structs.ErrorType(err) {
	case structs.S3ErrSignatureDoesNotMatch:
		return ec2Error(codeSignatureDoesNotMatch, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	case structs.S3ErrRequestTimeTooSkewed, structs.S3ErrAccessDenied:
		return ec2Error(codeRequestExpired, "Request has expired.")
	case structs.S3ErrInvalidAccessKeyID:
		return ec2Error(codeAuthFailure, "AWS was not able to validate the provided access credentials.")
	}
	return err
}
