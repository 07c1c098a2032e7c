package nova

import (
	"encoding/json"
	"testing"
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

// TestCallPassesToken checks that call sets the caller's token on a
// request's AuthToken, embedded or not, every time (the field's index is
// cached after the first), and leaves requests without one alone.
func TestCallPassesToken(t *testing.T) {
	type embedded struct{ AuthToken string }
	type outer struct {
		Name string
		embedded
	}
	type plain struct{ AuthToken string }
	type notString struct{ AuthToken int }
	rec := &recordRPC{}
	q := &request{api: &API{rpc: rec}, authToken: "tok"}
	for range 2 {
		o, p, n := &outer{}, &plain{}, &notString{AuthToken: 7}
		for _, args := range []any{o, p, n} {
			if err := q.call("X.Y", args, nil); err != nil {
				t.Fatal(err)
			}
		}
		if o.AuthToken != "tok" || p.AuthToken != "tok" || n.AuthToken != 7 {
			t.Fatalf("tokens: embedded %q, plain %q, int %d", o.AuthToken, p.AuthToken, n.AuthToken)
		}
	}
}
