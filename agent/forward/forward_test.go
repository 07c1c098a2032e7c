package forward

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/structs"
)

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("X-Marker") != "1":
			WriteError(w, structs.Errorf(structs.KindInvalid, "no marker"), "", false)
		case r.Header.Get("X-Auth-Token") != "tok":
			WriteError(w, structs.Errorf(structs.KindUnauthenticated, "no token"), "", false)
		case r.URL.Path == "/fail":
			WriteError(w, &structs.Error{Kind: structs.KindConflict, Type: "InstanceNotReady", Msg: "not ready"}, "InstanceNotReady", false)
		case r.URL.Path == "/garbage":
			w.WriteHeader(http.StatusBadGateway)
		default:
			WriteJSON(w, http.StatusOK, map[string]string{"Output": "hello"})
		}
	}))
	defer srv.Close()
	ctx := httpx.WithToken(context.Background(), "tok")
	req := func(path string) *Request {
		return &Request{Method: http.MethodGet, URL: srv.URL + path, Marker: "X-Marker", Peer: "the other agent"}
	}
	var out struct{ Output string }
	if err := Do(ctx, srv.Client(), req("/ok"), &out); err != nil || out.Output != "hello" {
		t.Fatalf("ok: %v %+v", err, out)
	}
	if err := Do(context.Background(), srv.Client(), req("/ok"), &out); structs.KindOf(err) != structs.KindUnauthenticated {
		t.Errorf("without the caller's token: %v", err)
	}
	err := Do(ctx, srv.Client(), req("/fail"), nil)
	var se *structs.Error
	if !errors.As(err, &se) || se.Kind != structs.KindConflict || se.Type != "InstanceNotReady" || se.Msg != "not ready" {
		t.Errorf("error kept: %#v", err)
	}
	if err := Do(ctx, srv.Client(), req("/garbage"), nil); structs.KindOf(err) != structs.KindUnavailable {
		t.Errorf("garbage answer: %v", err)
	}
	dead := &Request{Method: http.MethodGet, URL: "http://127.0.0.1:1/x", Marker: "X-Marker", Peer: "the other agent",
		Unavailable: func(format string, args ...any) error {
			return &structs.Error{Kind: structs.KindUnavailable, Type: "HostDown"}
		}}
	if err := Do(ctx, srv.Client(), dead, nil); !errors.As(err, &se) || se.Type != "HostDown" {
		t.Errorf("custom unavailable: %v", err)
	}
}

func TestWriteErrorStatuses(t *testing.T) {
	for kind, want := range map[structs.ErrorKind]int{structs.KindInvalid: 400, structs.KindUnauthenticated: 401,
		structs.KindPermission: 403, structs.KindNotFound: 404, structs.KindConflict: 409, structs.KindNoLeader: 503,
		structs.KindUnavailable: 503, structs.KindQuotaReached: 403, structs.KindTooLarge: 413, structs.KindInternal: 500} {
		rec := httptest.NewRecorder()
		WriteError(rec, structs.Errorf(kind, "x"), "", false)
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", kind, rec.Code, want)
		}
	}
	rec := httptest.NewRecorder()
	WriteError(rec, errors.New("x"), "", true)
	if rec.Code != http.StatusNotImplemented {
		t.Errorf("not supported: %d", rec.Code)
	}
}
