package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stratus-cloud/stratus/api"
)

// TestPerformSendsItsIdempotencyKeyAsAHeader: the key travels as the
// Idempotency-Key header, never in the body; without one no header is
// sent (the agent picks a key).
func TestPerformSendsItsIdempotencyKeyAsAHeader(t *testing.T) {
	var keys []string
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		bodies = append(bodies, body)
		w.Header().Set(api.HeaderIndex, "7")
		_, _ = w.Write([]byte(`{"RequestID":"req-1"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, wm, err := c.Instances().Perform("i1", api.OpStop, &api.ActionOptions{IdempotencyKey: "k-1"})
	if err != nil || res.RequestID != "req-1" || wm.LastIndex != 7 {
		t.Fatalf("perform: %+v %+v %v", res, wm, err)
	}
	if _, _, err := c.Instances().Perform("i1", api.OpStart, nil); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] != "k-1" || keys[1] != "" {
		t.Fatalf("keys sent %q, want k-1 then none", keys)
	}
	if _, ok := bodies[0]["IdempotencyKey"]; ok || bodies[0]["Action"] != api.OpStop {
		t.Fatalf("body %v", bodies[0])
	}
}
