package api_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/api/apitest"
)

// waitFor fails the test if ch is not closed or sent to within a few seconds,
// which is how a buffering client (that deadlocks these tests) shows up.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s: is the snapshot buffered instead of streamed?", what)
	}
}

func TestSnapshotSaveStreams(t *testing.T) {
	firstRead, stop := make(chan struct{}), make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/operator/snapshot" || r.URL.RawQuery != "stale" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), 400)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte("first-"))
		w.(http.Flusher).Flush()
		// The rest is only sent once the client has read the first chunk.
		select {
		case <-firstRead:
		case <-stop:
		}
		_, _ = w.Write([]byte("second"))
	}))
	defer ts.Close()
	defer close(stop) // unblocks the handler first if the test fails
	c, err := api.NewClient(&api.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}

	got := make(chan struct{})
	var rc io.ReadCloser
	go func() {
		defer close(got)
		rc, err = c.Operator().SnapshotSave(&api.QueryOptions{AllowStale: true})
	}()
	waitFor(t, got, "SnapshotSave to return")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	buf := make([]byte, len("first-"))
	if _, err := io.ReadFull(rc, buf); err != nil || string(buf) != "first-" {
		t.Fatalf("first chunk %q, %v", buf, err)
	}
	close(firstRead)
	rest, err := io.ReadAll(rc)
	if err != nil || string(rest) != "second" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

func TestSnapshotRestoreStreams(t *testing.T) {
	serverGotFirst := make(chan struct{})
	received := make(chan []byte, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.Header.Get("Content-Type") != "application/octet-stream" {
			http.Error(w, "unexpected "+r.Method, 400)
			return
		}
		first := make([]byte, len("first-"))
		if _, err := io.ReadFull(r.Body, first); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		close(serverGotFirst)
		rest, _ := io.ReadAll(r.Body)
		received <- append(first, rest...)
	}))
	defer ts.Close()
	c, err := api.NewClient(&api.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}

	pr, pw := io.Pipe()
	defer pw.Close() // unblocks a buffering client, then the handler, if the test fails
	done := make(chan error, 1)
	go func() { done <- c.Operator().SnapshotRestore(pr) }()
	// Writes to the pipe block until read, so they run aside: a client
	// that never reads fails the test by timeout instead of hanging it.
	go func() { _, _ = pw.Write([]byte("first-")) }()
	// The server must see the first chunk before the body is complete.
	waitFor(t, serverGotFirst, "the server to receive the first chunk")
	go func() {
		_, _ = pw.Write([]byte("second"))
		_ = pw.Close()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("SnapshotRestore did not return")
	}
	select {
	case got := <-received:
		if string(got) != "first-second" {
			t.Errorf("server received %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server received nothing")
	}
}

func TestSnapshotRoundTripAndErrors(t *testing.T) {
	srv := apitest.NewServer(t)
	op := srv.Client(t).Operator()
	if err := op.SnapshotRestore(bytes.NewReader([]byte("state-v2"))); err != nil {
		t.Fatal(err)
	}
	rc, err := op.SnapshotSave(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil || string(b) != "state-v2" {
		t.Errorf("saved %q, %v", b, err)
	}

	srv.Fail("GET", "/v1/operator/snapshot", &api.Error{StatusCode: 500, Kind: api.KindNoLeader, Message: "no cluster leader"})
	if _, err := op.SnapshotSave(nil); !api.IsKind(err, api.KindNoLeader) {
		t.Errorf("SnapshotSave error = %v", err)
	}
}
