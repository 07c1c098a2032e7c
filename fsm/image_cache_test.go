package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// populateImageCache fills the image cache request table for the
// snapshot round trip (aggregate 5 and img1 come from
// populatePlacement and populateImages).
func populateImageCache(t *testing.T, s *StateStore) {
	t.Helper()
	if err := s.RequestImageCache(6, &structs.ImageCacheEntry{AggregateID: 5, ImageIDs: []string{img1}, RequestedAt: 7}); err != nil {
		t.Fatal(err)
	}
}

func TestImageCacheRequests(t *testing.T) {
	f := testFSM(t)
	s := f.State()
	populate(t, s)
	if resp := apply(t, f, 10, structs.ImageCacheRequestType, &structs.ImageCacheEntry{AggregateID: 5, ImageIDs: []string{img1}, RequestedAt: 1}); resp != nil {
		t.Fatalf("apply: %v", resp)
	}
	reqs, err := s.ImageCacheRequests(nil)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("requests %v %v", reqs, err)
	}
	if r := reqs[0]; r.AggregateID != 5 || r.ImageID != img1 || r.CreateIndex != 6 || r.ModifyIndex != 10 || r.RequestedAt != 1 {
		t.Fatalf("request %+v", r)
	}
	// Asking again renews the request: agents see a new index.
	if resp := apply(t, f, 11, structs.ImageCacheRequestType, &structs.ImageCacheEntry{AggregateID: 5, ImageIDs: []string{img1}, RequestedAt: 2}); resp != nil {
		t.Fatalf("apply: %v", resp)
	}
	reqs, _ = s.ImageCacheRequests(nil)
	if r := reqs[0]; len(reqs) != 1 || r.CreateIndex != 6 || r.ModifyIndex != 11 || r.RequestedAt != 2 {
		t.Fatalf("renewed %+v", r)
	}
	if s.Index(TableImageCache) != 11 {
		t.Fatalf("table index %d", s.Index(TableImageCache))
	}
	// An unknown aggregate or image changes nothing.
	for _, tc := range []struct {
		e    *structs.ImageCacheEntry
		kind structs.ErrorKind
	}{
		{&structs.ImageCacheEntry{AggregateID: 99, ImageIDs: []string{img1}}, structs.KindNotFound},
		{&structs.ImageCacheEntry{AggregateID: 5, ImageIDs: []string{img1, "nope"}}, structs.KindInvalid},
		{&structs.ImageCacheEntry{AggregateID: 5}, structs.KindInvalid},
	} {
		if err := s.RequestImageCache(12, tc.e); structs.KindOf(err) != tc.kind {
			t.Fatalf("%+v: %v, want %v", tc.e, err, tc.kind)
		}
	}
	if s.Index(TableImageCache) != 11 {
		t.Fatal("a refused request wrote")
	}
}
