package storage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

// TestNBDExportAdmitsOnlyItsHosts: with a real qemu-storage-daemon, an
// export is opened by the certificate of the host the attachment names
// and refused to another host's valid, CA-signed certificate, to the
// subject the agents used to share and to a user's; during a move both
// hosts are admitted, after it only the new one. A daemon an older
// agent started (authz-simple of the shared subject) is adopted and
// switched to the hosts' list, and the shared subject is admitted again
// only when the upgrade setting asks for it.
func TestNBDExportAdmitsOnlyItsHosts(t *testing.T) {
	needQSD(t)
	ca, path, state, addr, e := exportedVolume(t, "write -P 0x5a 0 64k")
	name := structs.VolumeExportName("v1", "att-1")
	sync := func(e *NBDExporter, hosts ...string) {
		t.Helper()
		if err := e.Sync(context.Background(), []Export{{Name: name, Path: path, Hosts: hosts}}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(admitted ...string) {
		t.Helper()
		for _, who := range []string{"compute-a", "compute-b", "shared", "cli"} {
			out, ok := qemutest.Try(t, qemutest.NBDExport(addr, name), qemutest.Opts{TLSDir: ca.dirs[who]}, "read -P 0x5a 0 64k")
			switch want := slices.Contains(admitted, who); {
			case want && !ok:
				t.Fatalf("%s refused, want admitted: %s", who, out)
			case !want && ok:
				t.Fatalf("%s admitted, want refused: %s", who, out)
			}
		}
	}
	sync(e, "compute-a")
	check("compute-a")
	// The daemon's log names the refused subjects.
	if b, err := os.ReadFile(filepath.Join(state, "qsd.log")); err != nil || !strings.Contains(string(b), "CN=compute-b.client.global.stratus is denied") {
		t.Fatalf("qsd.log: %v: %s", err, b)
	}
	sync(e, "compute-a", "compute-b") // a move from A to B
	check("compute-a", "compute-b")
	sync(e, "compute-b")
	check("compute-b")

	// A daemon of an older agent: one authz-simple of the shared subject.
	for _, c := range []struct {
		cmd  string
		args map[string]any
	}{{"object-del", map[string]any{"id": authzObjectID}},
		{"object-add", map[string]any{"qom-type": "authz-simple", "id": authzObjectID, "identity": "CN=client.global.stratus"}}} {
		if err := e.q.run(c.cmd, c.args, nil); err != nil {
			t.Fatalf("%s: %v", c.cmd, err)
		}
	}
	check("shared")
	e.q.close()
	e2 := testExporter(t, ca, state, addr)
	t.Cleanup(func() { _ = e2.Stop() })
	sync(e2, "compute-b")
	check("compute-b")
	e2.q.close()

	// The upgrade setting: the shared subject too, until it is off.
	e3 := testExporter(t, ca, state, addr)
	e3.cfg.SharedClientDN = "CN=client.global.stratus"
	t.Cleanup(func() { _ = e3.Stop() })
	sync(e3, "compute-a")
	check("compute-a", "shared")
}
