package nova

import (
	"encoding/json"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestCreatedServerBodyEncodesAsMap checks that POST /servers's answer,
// a struct for speed, encodes byte for byte as the map it replaced.
func TestCreatedServerBodyEncodesAsMap(t *testing.T) {
	links := []link{{Href: "http://h/compute/v2.1/servers/x", Rel: "self"}, {Href: "http://h/compute/servers/x", Rel: "bookmark"}}
	groups := []any{map[string]any{"name": "default"}}
	asMap := map[string]any{"server": map[string]any{
		"id": "x", "links": links, "OS-DCF:diskConfig": "MANUAL", "adminPass": "p<w>&", "security_groups": groups,
	}}
	asStruct := &createdServerBody{Server: createdServer{
		ID: "x", Links: links, DiskConfig: "MANUAL", AdminPass: "p<w>&", SecurityGroups: groups,
	}}
	want, err := json.Marshal(asMap)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(asStruct)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("struct encodes as\n%s\nmap as\n%s", got, want)
	}
}

// recordRPC records the arguments of the calls it gets.
type recordRPC struct{ args []any }

func (r *recordRPC) RPC(_ string, args, _ any) error {
	r.args = append(r.args, args)
	return nil
}

// TestCallPassesToken checks that call sets the caller's token on every
// request that carries a credential (structs.Credentialed: queries,
// writes, streams), every time, and leaves other arguments alone.
func TestCallPassesToken(t *testing.T) {
	type plain struct{ Name string }
	rec := &recordRPC{}
	q := &request{api: &API{rpc: rec}, authToken: "tok"}
	for range 2 {
		query, write, stream, p := &structs.InstanceListRequest{}, &structs.InstanceCreateRequest{}, &structs.BlobGetRequest{}, &plain{Name: "n"}
		for _, args := range []any{query, write, stream, p} {
			if err := q.call("X.Y", args, nil); err != nil {
				t.Fatal(err)
			}
		}
		if query.AuthToken != "tok" || write.AuthToken != "tok" || stream.AuthToken != "tok" || p.Name != "n" {
			t.Fatalf("tokens: query %q, write %q, stream %q, plain %+v", query.AuthToken, write.AuthToken, stream.AuthToken, p)
		}
	}
	if len(rec.args) != 8 {
		t.Fatalf("%d calls reached the servers, want 8", len(rec.args))
	}
}
