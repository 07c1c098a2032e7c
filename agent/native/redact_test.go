package native

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestRedactAllocBlanksEveryToken: the /v1 views show neither a move's
// disk tokens nor a live migration's prepare token, and redacting
// changes nothing of the stored allocation.
func TestRedactAllocBlanksEveryToken(t *testing.T) {
	a := &structs.Allocation{ID: "a1", DiskExportToken: "t1",
		DiskSource:  &structs.DiskSource{AllocID: "a0", URL: "http://h0/", Token: "t2"},
		PrepareDest: &structs.DiskSource{AllocID: "a2", URL: "http://h2/", Token: "t3"}}
	r := redactAlloc(a)
	if r.DiskExportToken != "" || r.DiskSource.Token != "" || r.PrepareDest.Token != "" {
		t.Fatalf("redacted %+v %+v %+v", r, r.DiskSource, r.PrepareDest)
	}
	if r.PrepareDest.URL != "http://h2/" || r.DiskSource.AllocID != "a0" {
		t.Fatalf("redacting dropped more than the tokens: %+v %+v", r.DiskSource, r.PrepareDest)
	}
	if a.DiskExportToken != "t1" || a.DiskSource.Token != "t2" || a.PrepareDest.Token != "t3" {
		t.Fatal("redacting changed the stored allocation")
	}
	plain := &structs.Allocation{ID: "a3"}
	if redactAlloc(plain) != plain {
		t.Fatal("an allocation without tokens was copied")
	}
}
