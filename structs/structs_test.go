package structs

import (
	"errors"
	"fmt"
	"net/rpc"
	"strings"
	"testing"
)

func TestEntryRoundTrip(t *testing.T) {
	req := &FlavorUpsertRequest{Flavors: DevFlavors()}
	buf, err := EncodeEntry(FlavorUpsertRequestType, req)
	if err != nil {
		t.Fatal(err)
	}
	mt, ver, body, err := DecodeEntry(buf)
	if err != nil || mt != FlavorUpsertRequestType || ver != EntryVersion {
		t.Fatalf("header %v %v %v", mt, ver, err)
	}
	var out FlavorUpsertRequest
	if err := Decode(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Flavors) != 5 || out.Flavors[4].MemoryMB != 16384 {
		t.Fatalf("decoded %+v", out.Flavors)
	}
	if _, _, _, err := DecodeEntry([]byte{1}); err == nil {
		t.Fatal("short entry accepted")
	}
	if got := (IgnoreUnknownTypeFlag | FlavorDeleteRequestType).String(); got != "FlavorDelete" {
		t.Fatalf("name %q", got)
	}
}

func TestErrorKindsSurviveRPCText(t *testing.T) {
	err := Errorf(KindNotFound, "flavor %q not found", "9")
	// What net/rpc hands a caller: only the text.
	remote := rpc.ServerError(err.Error())
	if KindOf(remote) != KindNotFound || Message(remote) != `flavor "9" not found` {
		t.Fatalf("kind %q message %q", KindOf(remote), Message(remote))
	}
	wrapped := fmt.Errorf("flavor upsert: %w", Errorf(KindConflict, "name taken"))
	if KindOf(wrapped) != KindConflict || Message(wrapped) != "name taken" {
		t.Fatalf("wrapped: %q %q", KindOf(wrapped), Message(wrapped))
	}
	if KindOf(errors.New("boom")) != KindInternal || KindOf(nil) != "" {
		t.Fatal("plain errors are internal")
	}
}

func TestFlavorValidate(t *testing.T) {
	for _, f := range DevFlavors() {
		if err := f.Validate(); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
	}
	bad := []*Flavor{
		{Name: "x", VCPUs: 1, MemoryMB: 1},
		{ID: "1", Name: " x", VCPUs: 1, MemoryMB: 1},
		{ID: "1", Name: "x", VCPUs: 0, MemoryMB: 1},
		{ID: "1", Name: "x", VCPUs: 1, MemoryMB: 0},
		{ID: "1", Name: "x", VCPUs: 1, MemoryMB: 1, RootGB: -1},
		{ID: "a/b", Name: "x", VCPUs: 1, MemoryMB: 1},
		{ID: "1", Name: "x", VCPUs: 1, MemoryMB: 1, ExtraSpecs: map[string]string{"": "v"}},
		{ID: "1", Name: strings.Repeat("n", 256), VCPUs: 1, MemoryMB: 1},
	}
	for i, f := range bad {
		if err := f.Validate(); KindOf(err) != KindInvalid {
			t.Errorf("case %d accepted: %v", i, err)
		}
	}
	c := DevFlavors()[0]
	c.ExtraSpecs["k"] = "v"
	d := c.Copy()
	d.ExtraSpecs["k"] = "changed"
	if c.ExtraSpecs["k"] != "v" {
		t.Fatal("Copy shares extra specs")
	}
}
