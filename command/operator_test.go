package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/api"
)

func threeServers() []*api.RaftServer {
	return []*api.RaftServer{
		{ID: "id-1", Node: "n1", Address: "10.0.0.1:8776", Leader: true, Voter: true},
		{ID: "id-2", Node: "n2", Address: "10.0.0.2:8776", Voter: true},
		{ID: "id-3", Node: "n3", Address: "10.0.0.3:8776", Voter: false},
	}
}

func TestServerMembers(t *testing.T) {
	srv := newServer(t)
	srv.SetRaft(threeServers())
	out := runOK(t, "server", "members", "-address", srv.URL)
	want := "" +
		"Name  Address    Port  Status  Leader  Role    Region  AZ    Version\n" +
		"n1    127.0.0.1  8777  alive   true    server  global  nova  0.1.0\n" +
		"n2    127.0.0.1  8787  alive   false   server  global  nova  0.1.0\n" +
		"n3    127.0.0.1  8797  alive   false   server  global  nova  0.1.0\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	out = runOK(t, "server", "members", "--address", srv.URL, "--json")
	var resp api.MembersResponse
	if err := json.Unmarshal([]byte(out), &resp); err != nil || resp.ServerName != "n1" || len(resp.Members) != 3 {
		t.Errorf("-json: %v, %q", err, out)
	}
}

func TestRaftListPeers(t *testing.T) {
	srv := newServer(t)
	srv.SetRaft(threeServers())
	out := runOK(t, "operator", "raft", "list-peers", "-address", srv.URL)
	want := "" +
		"Node  ID    Address        State     Voter\n" +
		"n1    id-1  10.0.0.1:8776  leader    true\n" +
		"n2    id-2  10.0.0.2:8776  follower  true\n" +
		"n3    id-3  10.0.0.3:8776  follower  false\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	out = runOK(t, "operator", "raft", "list-peers", "-address", srv.URL, "-json", "-stale")
	var cfg api.RaftConfiguration
	if err := json.Unmarshal([]byte(out), &cfg); err != nil || len(cfg.Servers) != 3 || !cfg.Servers[0].Leader {
		t.Errorf("-json: %v, %q", err, out)
	}
	if q := srv.LastRequest().RawQuery; q != "stale" {
		t.Errorf("-stale sent %q", q)
	}

	srv.Fail("GET", "/v1/operator/raft/configuration", &api.Error{StatusCode: 500, Kind: api.KindNoLeader, Message: "no cluster leader"})
	_, errOut, code := run(t, "operator", "raft", "list-peers", "-address", srv.URL)
	if code != 1 || errOut != "Error getting the Raft configuration: Unexpected response code 500 (no leader: no cluster leader)\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestRaftRemovePeer(t *testing.T) {
	srv := newServer(t)
	srv.SetRaft(threeServers())
	for _, args := range [][]string{{}, {"-peer-address", "a", "-peer-id", "b"}, {"-peer-id", "x", "extra"}} {
		_, errOut, code := run(t, append([]string{"operator", "raft", "remove-peer", "-address", srv.URL}, args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if out := runOK(t, "operator", "raft", "remove-peer", "-address", srv.URL, "-peer-address", "10.0.0.2:8776"); out != "Removed peer with address \"10.0.0.2:8776\"\n" {
		t.Errorf("stdout %q", out)
	}
	if req := srv.LastRequest(); req.Method != "DELETE" || req.Query.Get("address") != "10.0.0.2:8776" {
		t.Errorf("request %+v", req)
	}
	if out := runOK(t, "operator", "raft", "remove-peer", "--address", srv.URL, "--peer-id", "id-3"); out != "Removed peer with ID \"id-3\"\n" {
		t.Errorf("stdout %q", out)
	}
	if got := srv.Raft(); len(got) != 1 || got[0].ID != "id-1" {
		t.Errorf("peers left: %+v", got)
	}
	_, errOut, code := run(t, "operator", "raft", "remove-peer", "-address", srv.URL, "-peer-id", "gone")
	if code != 1 || !strings.HasPrefix(errOut, "Error removing peer: Unexpected response code 404 (not found: ") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestSnapshotSaveAndRestore(t *testing.T) {
	srv := newServer(t)
	srv.SetSnapshot([]byte("snapshot-bytes"))
	dir := t.TempDir()
	file := filepath.Join(dir, "backup.snap")

	out := runOK(t, "operator", "snapshot", "save", "-address", srv.URL, file)
	if out != "Saved snapshot to "+file+" (14 bytes)\n" {
		t.Errorf("stdout %q", out)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "snapshot-bytes" {
		t.Errorf("file %q, %v", b, err)
	}
	if _, err := os.Stat(file + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}

	if err := os.WriteFile(file, []byte("restored-state"), 0o600); err != nil {
		t.Fatal(err)
	}
	out = runOK(t, "operator", "snapshot", "restore", "--address", srv.URL, "--json", file)
	var res struct {
		File string
		Size int64
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.File != file || res.Size != 14 {
		t.Errorf("-json: %v, %q", err, out)
	}
	if got := srv.Snapshot(); string(got) != "restored-state" {
		t.Errorf("server snapshot %q", got)
	}

	_, errOut, code := run(t, "operator", "snapshot", "restore", "-address", srv.URL, filepath.Join(dir, "missing"))
	if code != 1 || !strings.HasPrefix(errOut, "Error opening snapshot: ") {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	if _, _, code := run(t, "operator", "snapshot", "save", "-address", srv.URL); code != 2 {
		t.Errorf("save without FILE: exit %d", code)
	}
}

func TestSnapshotSaveFailureLeavesNoFile(t *testing.T) {
	srv := newServer(t)
	srv.Fail("GET", "/v1/operator/snapshot", &api.Error{StatusCode: 403, Kind: api.KindPermission, Message: "ACL token not found"})
	file := filepath.Join(t.TempDir(), "backup.snap")
	_, errOut, code := run(t, "operator", "snapshot", "save", "-address", srv.URL, file)
	if code != 1 || errOut != "Error saving snapshot: Unexpected response code 403 (permission denied: ACL token not found)\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	for _, p := range []string{file, file + ".tmp"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a failed save", p)
		}
	}

	// A directory that does not exist fails before anything is written.
	srv2 := newServer(t)
	_, errOut, code = run(t, "operator", "snapshot", "save", "-address", srv2.URL, filepath.Join(t.TempDir(), "no", "such", "x"))
	if code != 1 || !strings.HasPrefix(errOut, "Error saving snapshot: ") {
		t.Errorf("bad path: exit %d, stderr %q", code, errOut)
	}
}
