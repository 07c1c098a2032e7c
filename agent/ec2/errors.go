package ec2

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// EC2's error codes this API answers.
const (
	codeAuthFailure            = "AuthFailure"
	codeSignatureDoesNotMatch  = "SignatureDoesNotMatch"
	codeIncompleteSignature    = "IncompleteSignature"
	codeRequestExpired         = "RequestExpired"
	codeUnauthorizedOperation  = "UnauthorizedOperation"
	codeInvalidAction          = "InvalidAction"
	codeMissingAction          = "MissingAction"
	codeMissingParameter       = "MissingParameter"
	codeInvalidParameterValue  = "InvalidParameterValue"
	codeInvalidParameterCombo  = "InvalidParameterCombination"
	codeInvalidInstanceID      = "InvalidInstanceID.Malformed"
	codeInstanceNotFound       = "InvalidInstanceID.NotFound"
	codeIncorrectInstanceState = "IncorrectInstanceState"
	codeInvalidAMINotFound     = "InvalidAMIID.NotFound"
	codeInvalidAMIMalformed    = "InvalidAMIID.Malformed"
	codeKeyPairNotFound        = "InvalidKeyPair.NotFound"
	codeKeyPairDuplicate       = "InvalidKeyPair.Duplicate"
	codeKeyFormat              = "InvalidKey.Format"
	codeInvalidNextToken       = "InvalidNextToken"
	codeInsufficientCapacity   = "InsufficientInstanceCapacity"
	codeInstanceLimitExceeded  = "InstanceLimitExceeded"
	codeRequestLimitExceeded   = "RequestLimitExceeded"
	codeUnavailable            = "Unavailable"
	codeInternalError          = "InternalError"
	codeUnsupported            = "UnsupportedOperation"
	codeIdempotentMismatch     = "IdempotentParameterMismatch"
)

// statusOf is the HTTP status of each code; 400 when not listed.
var statusOf = map[string]int{
	codeAuthFailure:           http.StatusUnauthorized,
	codeSignatureDoesNotMatch: http.StatusForbidden,
	codeRequestExpired:        http.StatusBadRequest,
	codeUnauthorizedOperation: http.StatusForbidden,
	codeRequestLimitExceeded:  http.StatusServiceUnavailable,
	// EC2 answers a permitted dry run with 412 and this code.
	"DryRunOperation": http.StatusPreconditionFailed,
	codeUnavailable:   http.StatusServiceUnavailable,
	codeInternalError: http.StatusInternalServerError,
}

// apiError is an error answered with an EC2 code.
type apiError struct {
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func (e *apiError) httpStatus() int {
	if st, ok := statusOf[e.Code]; ok {
		return st
	}
	return http.StatusBadRequest
}

// ec2Error builds an apiError.
func ec2Error(code, format string, args ...any) error {
	return &apiError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// toAPIError maps any error to its EC2 code: the API's own, else by the
// servers' error kind.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	msg := structs.Message(err)
	switch structs.KindOf(err) {
	case structs.KindInvalid:
		return &apiError{Code: codeInvalidParameterValue, Message: msg}
	case structs.KindNotFound:
		return &apiError{Code: codeInvalidParameterValue, Message: msg}
	case structs.KindPermission, structs.KindUnauthenticated:
		return &apiError{Code: codeUnauthorizedOperation, Message: "You are not authorized to perform this operation. " + msg}
	case structs.KindConflict:
		return &apiError{Code: codeIncorrectInstanceState, Message: msg}
	case structs.KindQuotaReached:
		return &apiError{Code: codeInstanceLimitExceeded, Message: msg}
	case structs.KindNoLeader, structs.KindUnavailable:
		return &apiError{Code: codeUnavailable, Message: "The service is unavailable. Please try again shortly. " + msg}
	}
	return &apiError{Code: codeInternalError, Message: "An internal error has occurred."}
}

// errorResponse is EC2's error document.
type errorResponse struct {
	XMLName xml.Name `xml:"Response"`
	Errors  struct {
		Error []errorItem `xml:"Error"`
	} `xml:"Errors"`
	RequestID string `xml:"RequestID"`
}

type errorItem struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// ErrorDocument is EC2's error document for code and message, for a
// refusal made before the API runs (the agent's request limits answer
// RequestLimitExceeded with it).
func ErrorDocument(code, message string) []byte {
	body := errorResponse{RequestID: newRequestID()}
	body.Errors.Error = []errorItem{{Code: code, Message: message}}
	data, _ := xml.Marshal(body) // a struct of strings always encodes
	return append([]byte(xml.Header), data...)
}
