package s3

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"net/http"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/internal/sigv4"
	"github.com/stratus-cloud/stratus/structs"
)

// S3 error codes of the edge (the servers' travel as structs error
// types, structs/s3.go).
const (
	codeAccessDenied          = structs.S3ErrAccessDenied
	codeSignatureDoesNotMatch = "SignatureDoesNotMatch"
	codeRequestTimeTooSkewed  = "RequestTimeTooSkewed"
	codeRequestNotYetValid    = "AccessDenied"
	codeAuthHeaderMalformed   = "AuthorizationHeaderMalformed"
	codeAuthQueryMalformed    = "AuthorizationQueryParametersError"
	codeInvalidArgument       = structs.S3ErrInvalidArgument
	codeInvalidRequest        = "InvalidRequest"
	codeInvalidDigest         = "InvalidDigest"
	codeBadDigest             = structs.S3ErrBadDigest
	codeIncompleteBody        = structs.S3ErrIncompleteBody
	codeMalformedXML          = "MalformedXML"
	codeInvalidRange          = "InvalidRange"
	codeNotImplemented        = "NotImplemented"
	codeMethodNotAllowed      = "MethodNotAllowed"
	codeMissingContentLength  = "MissingContentLength"
	codeInternalError         = "InternalError"
	codeServiceUnavailable    = "ServiceUnavailable"
	codeNoSuchKey             = structs.S3ErrNoSuchKey
	codeNoSuchBucket          = structs.S3ErrNoSuchBucket
	codeInvalidAccessKeyID    = structs.S3ErrInvalidAccessKeyID
)

// statusOf is the HTTP status S3 answers with each code.
var statusOf = map[string]int{
	codeAccessDenied:                     http.StatusForbidden,
	codeSignatureDoesNotMatch:            http.StatusForbidden,
	codeRequestTimeTooSkewed:             http.StatusForbidden,
	codeInvalidAccessKeyID:               http.StatusForbidden,
	codeAuthHeaderMalformed:              http.StatusBadRequest,
	codeAuthQueryMalformed:               http.StatusBadRequest,
	codeInvalidArgument:                  http.StatusBadRequest,
	codeInvalidRequest:                   http.StatusBadRequest,
	codeInvalidDigest:                    http.StatusBadRequest,
	codeBadDigest:                        http.StatusBadRequest,
	codeIncompleteBody:                   http.StatusBadRequest,
	codeMalformedXML:                     http.StatusBadRequest,
	structs.S3ErrXAmzContentSHA256:       http.StatusBadRequest,
	structs.S3ErrInvalidBucketName:       http.StatusBadRequest,
	structs.S3ErrInvalidPart:             http.StatusBadRequest,
	structs.S3ErrInvalidPartOrder:        http.StatusBadRequest,
	structs.S3ErrEntityTooSmall:          http.StatusBadRequest,
	structs.S3ErrEntityTooLarge:          http.StatusBadRequest,
	structs.S3ErrKeyTooLong:              http.StatusBadRequest,
	codeNoSuchKey:                        http.StatusNotFound,
	codeNoSuchBucket:                     http.StatusNotFound,
	structs.S3ErrNoSuchUpload:            http.StatusNotFound,
	structs.S3ErrBucketNotEmpty:          http.StatusConflict,
	structs.S3ErrBucketAlreadyExists:     http.StatusConflict,
	structs.S3ErrBucketAlreadyOwnedByYou: http.StatusConflict,
	"OperationAborted":                   http.StatusConflict,
	codeInvalidRange:                     http.StatusRequestedRangeNotSatisfiable,
	codeMethodNotAllowed:                 http.StatusMethodNotAllowed,
	codeMissingContentLength:             http.StatusLengthRequired,
	codeNotImplemented:                   http.StatusNotImplemented,
	codeServiceUnavailable:               http.StatusServiceUnavailable,
	codeInternalError:                    http.StatusInternalServerError,
}

// statuses are the HTTP statuses of the servers' error kinds that S3
// has a code for (kindCodes). It is not route.Default: a kind S3 has no
// code for (a quota reached, an unauthenticated call) is an
// InternalError, as is an unknown kind; and an object too large is
// S3's EntityTooLarge, a 400.
var statuses = route.Statuses{
	structs.KindInvalid:     http.StatusBadRequest,
	structs.KindNotFound:    http.StatusNotFound,
	structs.KindPermission:  http.StatusForbidden,
	structs.KindConflict:    http.StatusConflict,
	structs.KindTooLarge:    http.StatusBadRequest,
	structs.KindNoLeader:    http.StatusServiceUnavailable,
	structs.KindUnavailable: http.StatusServiceUnavailable,
}

// kindCodes are the S3 codes of the error kinds in statuses; each
// code's own status (statusOf) is its kind's, which a test checks.
var kindCodes = map[structs.ErrorKind]string{
	structs.KindInvalid:     codeInvalidArgument,
	structs.KindNotFound:    codeNoSuchKey,
	structs.KindPermission:  codeAccessDenied,
	structs.KindConflict:    "OperationAborted",
	structs.KindTooLarge:    structs.S3ErrEntityTooLarge,
	structs.KindNoLeader:    codeServiceUnavailable,
	structs.KindUnavailable: codeServiceUnavailable,
}

// apiError is an error answered with an S3 code.
type apiError struct {
	Code    string
	Message string
	// status is the answer's status when an error kind chose it
	// (statuses); 0 for the code's (statusOf).
	status int
}

// httpStatus is the status e is answered with: its kind's, else its
// code's, else 400.
func (e *apiError) httpStatus() int {
	if e.status != 0 {
		return e.status
	}
	if st, ok := statusOf[e.Code]; ok {
		return st
	}
	return http.StatusBadRequest
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// s3Error builds an apiError.
func s3Error(code, format string, args ...any) error {
	return &apiError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// toAPIError maps any error to its S3 code and message: the edge's own,
// a server error's S3 type, else by kind.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var se *sigv4.Error
	if errors.As(err, &se) {
		return &apiError{Code: se.Code, Message: se.Message}
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &apiError{Code: codeMalformedXML, Message: fmt.Sprintf("The request body is larger than %d bytes.", tooBig.Limit)}
	}
	msg := structs.Message(err)
	if t := structs.ErrorType(err); t != "" {
		if _, known := statusOf[t]; known {
			return &apiError{Code: t, Message: msg}
		}
	}
	status, known := statuses.Of(err)
	if code, ok := kindCodes[structs.KindOf(err)]; ok && known {
		if code == codeServiceUnavailable {
			msg = "Please reduce your request rate. " + msg
		}
		return &apiError{Code: code, Message: msg, status: status}
	}
	return &apiError{Code: codeInternalError, Message: "We encountered an internal error. Please try again."}
}

// errorBody is S3's error document.
type errorBody struct {
	XMLName    xml.Name `xml:"Error"`
	Code       string   `xml:"Code"`
	Message    string   `xml:"Message"`
	BucketName string   `xml:"BucketName,omitempty"`
	Key        string   `xml:"Key,omitempty"`
	Resource   string   `xml:"Resource"`
	RequestID  string   `xml:"RequestId"`
}

// newChecksum returns the hash of an x-amz-checksum-* algorithm, or nil.
func newChecksum(name string) hash.Hash {
	switch name {
	case "crc32":
		return crc32.NewIEEE()
	case "crc32c":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "crc64nvme":
		return crc64.New(crc64NVMETable)
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	}
	return nil
}

// crc64NVMETable is CRC-64/NVME's (reflected polynomial 0x9a6c9329ac4bc9b5).
var crc64NVMETable = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// encodeChecksum is a checksum as S3 sends it: base64 of its bytes.
func encodeChecksum(sum []byte) string { return base64.StdEncoding.EncodeToString(sum) }
