package api_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/api/apitest"
)

func TestDefaultConfig(t *testing.T) {
	t.Setenv(api.EnvAddress, "")
	t.Setenv(api.EnvToken, "")
	c := api.DefaultConfig()
	if c.Address != "http://127.0.0.1:8774" || c.Token != "" {
		t.Fatalf("defaults: %+v", c)
	}
	t.Setenv(api.EnvAddress, "https://stratus.example:9999")
	t.Setenv(api.EnvToken, "s3cret")
	c = api.DefaultConfig()
	if c.Address != "https://stratus.example:9999" || c.Token != "s3cret" {
		t.Fatalf("from env: %+v", c)
	}
}

func TestNewClientValidatesAddress(t *testing.T) {
	for _, addr := range []string{"", "127.0.0.1:8774", "ftp://h:1", "http://", "http://h:1/?x=1", "::"} {
		if _, err := api.NewClient(&api.Config{Address: addr}); err == nil {
			t.Errorf("NewClient(%q): want error", addr)
		} else if !strings.Contains(err.Error(), "invalid address") {
			t.Errorf("NewClient(%q): %v", addr, err)
		}
	}
	for _, addr := range []string{"http://127.0.0.1:8774", "https://h", "http://h:1/prefix/"} {
		c, err := api.NewClient(&api.Config{Address: addr})
		if err != nil {
			t.Fatalf("NewClient(%q): %v", addr, err)
		}
		if strings.HasSuffix(c.Address(), "/") {
			t.Errorf("Address() = %q keeps a trailing slash", c.Address())
		}
	}
}

func TestBlockingQueryParamsAndMeta(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.AddFlavor(&api.Flavor{ID: "1", Name: "m1.tiny", VCPUs: 1, MemoryMB: 512})
	c := srv.Client(t)

	flavors, meta, err := c.Flavors().List(&api.QueryOptions{WaitIndex: 42, WaitTime: 5 * time.Second, AllowStale: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.LastRequest().RawQuery; got != "index=42&wait=5s&stale" {
		t.Errorf("query = %q", got)
	}
	if len(flavors) != 1 || flavors[0].Name != "m1.tiny" {
		t.Errorf("flavors = %+v", flavors)
	}
	if meta.LastIndex != 2 || !meta.KnownLeader || meta.LastContact != 0 {
		t.Errorf("meta = %+v", meta)
	}

	if _, _, err := c.Flavors().List(nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastRequest().RawQuery; got != "" {
		t.Errorf("query without options = %q", got)
	}
}

func TestQueryMetaHeaders(t *testing.T) {
	var index string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(api.HeaderIndex, index)
		w.Header().Set(api.HeaderKnownLeader, "false")
		w.Header().Set(api.HeaderLastContact, "250")
		_, _ = w.Write([]byte(`[]`))
	}))
	defer ts.Close()
	c, err := api.NewClient(&api.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	index = "77"
	_, meta, err := c.Flavors().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := api.QueryMeta{LastIndex: 77, KnownLeader: false, LastContact: 250 * time.Millisecond}
	if *meta != want {
		t.Errorf("meta = %+v, want %+v", *meta, want)
	}
	index = "seventy"
	if _, _, err := c.Flavors().List(nil); err == nil || !strings.Contains(err.Error(), api.HeaderIndex) {
		t.Errorf("malformed index: err = %v", err)
	}
}

func TestTokenAndPathPrefix(t *testing.T) {
	var path, token string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, token = r.URL.EscapedPath(), r.Header.Get(api.HeaderToken)
		_, _ = w.Write([]byte(`"10.0.0.1:8776"`))
	}))
	defer ts.Close()
	c, err := api.NewClient(&api.Config{Address: ts.URL + "/stratus/", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	leader, err := c.Status().Leader()
	if err != nil || leader != "10.0.0.1:8776" {
		t.Fatalf("Leader() = %q, %v", leader, err)
	}
	if path != "/stratus/v1/status/leader" || token != "tok" {
		t.Errorf("path %q token %q", path, token)
	}
}

func TestFlavorsCRUD(t *testing.T) {
	srv := apitest.NewServer(t)
	c := srv.Client(t)
	in := &api.Flavor{ID: "a/b c", Name: "m1.odd", VCPUs: 2, MemoryMB: 1024, RootGB: 10,
		RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{"hw:cpu_policy": "dedicated"}}
	out, wm, err := c.Flavors().Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if out.CreateIndex == 0 || wm.LastIndex != out.CreateIndex || out.ExtraSpecs["hw:cpu_policy"] != "dedicated" {
		t.Errorf("created %+v, meta %+v", out, wm)
	}
	if req := srv.LastRequest(); req.Method != "POST" || !strings.Contains(string(req.Body), `"VCPUs":2`) {
		t.Errorf("create request %+v body %s", req, req.Body)
	}

	for _, key := range []string{"a/b c", "m1.odd"} {
		f, _, err := c.Flavors().Info(key, nil)
		if err != nil || f.ID != "a/b c" {
			t.Errorf("Info(%q) = %+v, %v", key, f, err)
		}
	}
	if _, err := c.Flavors().Delete("a/b c"); err != nil {
		t.Fatal(err)
	}
	if srv.Flavor("a/b c") != nil {
		t.Error("flavor not deleted")
	}
	_, err = c.Flavors().Delete("a/b c")
	var apiErr *api.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || !api.IsNotFound(err) {
		t.Fatalf("second delete: %#v", err)
	}
	if got, want := err.Error(), `Unexpected response code 404 (not found: flavor "a/b c" not found)`; got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
}

func TestErrorDecoding(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		code                    int
		want                    api.Error
		text                    string
	}{
		{"json", "application/json", `{"error":"flavor \"9\" not found","kind":"not found"}`, 404,
			api.Error{StatusCode: 404, Kind: "not found", Message: `flavor "9" not found`},
			`Unexpected response code 404 (not found: flavor "9" not found)`},
		{"json already prefixed", "application/json", `{"error":"no leader: no cluster leader","kind":"no leader"}`, 500,
			api.Error{StatusCode: 500, Kind: "no leader", Message: "no leader: no cluster leader"},
			`Unexpected response code 500 (no leader: no cluster leader)`},
		{"plain text", "text/plain", "bad gateway: upstream down\n", 502,
			api.Error{StatusCode: 502, Message: "bad gateway: upstream down"},
			`Unexpected response code 502 (bad gateway: upstream down)`},
		{"other json", "application/json", `{"message":"nope"}`, 400,
			api.Error{StatusCode: 400, Message: `{"message":"nope"}`},
			`Unexpected response code 400 ({"message":"nope"})`},
		{"empty", "", "", 503,
			api.Error{StatusCode: 503},
			`Unexpected response code 503 (Service Unavailable)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer ts.Close()
			c, err := api.NewClient(&api.Config{Address: ts.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.Flavors().Info("9", nil)
			var got *api.Error
			if !errors.As(err, &got) {
				t.Fatalf("err = %#v, want *api.Error", err)
			}
			if *got != tc.want {
				t.Errorf("error = %+v, want %+v", *got, tc.want)
			}
			if err.Error() != tc.text {
				t.Errorf("Error() = %s, want %s", err.Error(), tc.text)
			}
		})
	}
}

func TestStatusAndAgent(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.SetRaft([]*api.RaftServer{
		{ID: "a", Node: "n1", Address: "10.0.0.1:8776", Leader: true, Voter: true},
		{ID: "b", Node: "n2", Address: "10.0.0.2:8776", Voter: true},
	})
	c := srv.Client(t)

	leader, err := c.Status().Leader()
	if err != nil || leader != "10.0.0.1:8776" {
		t.Errorf("Leader() = %q, %v", leader, err)
	}
	peers, err := c.Status().Peers()
	if err != nil || strings.Join(peers, ",") != "10.0.0.1:8776,10.0.0.2:8776" {
		t.Errorf("Peers() = %v, %v", peers, err)
	}
	self, err := c.Agent().Self()
	if err != nil || self.Config.NodeName != "n1" || !self.Config.Server || self.Stats["raft"]["state"] != "Leader" {
		t.Errorf("Self() = %+v, %v", self, err)
	}
	members, err := c.Agent().Members()
	if err != nil || members.ServerName != "n1" || len(members.Members) != 2 || !members.Members[0].Leader {
		t.Errorf("Members() = %+v, %v", members, err)
	}
}

func TestOperatorRaft(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.SetRaft([]*api.RaftServer{
		{ID: "a", Node: "n1", Address: "10.0.0.1:8776", Leader: true, Voter: true},
		{ID: "b", Node: "n2", Address: "10.0.0.2:8776", Voter: true},
		{ID: "c", Node: "n3", Address: "10.0.0.3:8776", Voter: true},
	})
	op := srv.Client(t).Operator()
	cfg, err := op.RaftGetConfiguration(&api.QueryOptions{AllowStale: true})
	if err != nil || len(cfg.Servers) != 3 || cfg.Index == 0 || srv.LastRequest().RawQuery != "stale" {
		t.Fatalf("configuration = %+v, %v (query %q)", cfg, err, srv.LastRequest().RawQuery)
	}
	if err := op.RaftRemovePeerByAddress("10.0.0.2:8776"); err != nil {
		t.Fatal(err)
	}
	if req := srv.LastRequest(); req.Method != "DELETE" || req.Path != "/v1/operator/raft/peer" || req.Query.Get("address") != "10.0.0.2:8776" {
		t.Errorf("remove by address sent %+v", req)
	}
	if err := op.RaftRemovePeerByID("c"); err != nil {
		t.Fatal(err)
	}
	if req := srv.LastRequest(); req.RawQuery != "id=c" {
		t.Errorf("remove by id sent %+v", req)
	}
	if got := srv.Raft(); len(got) != 1 || got[0].ID != "a" {
		t.Errorf("raft after removals = %+v", got)
	}
	if err := op.RaftRemovePeerByID("zzz"); !api.IsNotFound(err) {
		t.Errorf("removing unknown peer: %v", err)
	}
}

func TestPermissionDenied(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.RequireToken("right")
	c, err := api.NewClient(&api.Config{Address: srv.URL, Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Agent().Self()
	if !api.IsKind(err, api.KindPermission) || srv.LastRequest().Token != "wrong" {
		t.Errorf("err = %v, token sent %q", err, srv.LastRequest().Token)
	}
}
