package route

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestCallersStampTokens(t *testing.T) {
	var seen string
	next := Func(func(method string, args, reply any) error {
		if cr, ok := args.(structs.Credentialed); ok {
			seen = cr.AuthTokenValue()
		}
		return nil
	})
	req := &structs.InstanceListRequest{}
	_ = AsCaller(next, "user").RPC("Instance.List", req, nil)
	if seen != "user" {
		t.Fatalf("AsCaller sent %q", seen)
	}
	_ = WithCredential(next, "node").RPC("Instance.List", req, nil)
	if seen != "user" {
		t.Fatalf("WithCredential replaced a user's token: %q", seen)
	}
	_ = WithCredential(next, "node").RPC("Instance.List", &structs.InstanceListRequest{}, nil)
	if seen != "node" {
		t.Fatalf("WithCredential sent %q", seen)
	}
	_ = AsCaller(next, "user").RPC("Blob.Get", &structs.BlobGetRequest{}, nil)
	if seen != "user" {
		t.Fatalf("stream request got %q", seen)
	}
	// Arguments without a credential pass untouched.
	if err := AsCaller(next, "user").RPC("X", &struct{ A int }{}, nil); err != nil {
		t.Fatal(err)
	}
}
