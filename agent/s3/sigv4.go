package s3

import (
	"net/http"

	"github.com/stratus-cloud/stratus/internal/sigv4"
)

// AWS Signature Version 4, as S3 checks it: parsed by internal/sigv4
// (shared with the EC2 API), plus what S3 alone asks for: the
// x-amz-content-sha256 header on header-signed requests, and the chunk
// signatures of STREAMING-AWS4-HMAC-SHA256-PAYLOAD bodies (chunked.go).

// sigRequest is a parsed signature.
type sigRequest = sigv4.Request

const (
	amzDateFmt             = sigv4.DateFormat
	unsignedPayload        = sigv4.UnsignedPayload
	streamingPayload       = sigv4.StreamingPayload
	streamingPayloadTrail  = sigv4.StreamingPayloadTrail
	streamingUnsignedTrail = sigv4.StreamingUnsignedTrail
	emptySHA256            = sigv4.EmptySHA256
)

// parseSigV4 reads an S3 request's signature (sigv4.Parse); a
// header-signed request must name its payload hash.
func parseSigV4(r *http.Request) (*sigRequest, bool, error) {
	sig, ok, err := sigv4.Parse(r, "s3")
	if err != nil || !ok {
		return sig, ok, err
	}
	if !sig.Presigned && sig.PayloadHash == "" {
		return nil, true, s3Error(codeInvalidRequest, "Missing required header for this request: x-amz-content-sha256")
	}
	return sig, true, nil
}

// hmacSHA256 and isHexSig are sigv4's, for the chunk signatures.
var (
	hmacSHA256 = sigv4.HMACSHA256
	isHexSig   = sigv4.IsHexSig
)
