package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/stratus-cloud/stratus/client/imagecache"
	"io"
	"net/http"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// computeCall sends one Compute API request at a microversion and
// decodes the answer.
func computeCall(t *testing.T, a *Agent, method, path, token, version string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, a.url("/compute/v2.1"+path), rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("OpenStack-API-Version", "compute "+version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, out
}

// TestAggregateImagePrecache: a 2.81 image cache request on an
// aggregate makes the pre-cacher of a host in it fetch the image from
// the servers into the host's image cache.
func TestAggregateImagePrecache(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	admin := keystoneToken(t, a, "admin")
	var image string
	waitFor(t, "the dev image", func() error {
		code, body := computeCall(t, a, "GET", "/images/detail?name=cirros", admin, "2.1", nil)
		imgs, _ := body["images"].([]any)
		if code != http.StatusOK || len(imgs) != 1 || imgs[0].(map[string]any)["status"] != "ACTIVE" {
			return fmt.Errorf("%d %v", code, body)
		}
		image = imgs[0].(map[string]any)["id"].(string)
		return nil
	})
	code, body := computeCall(t, a, "POST", "/os-aggregates", admin, "2.81", map[string]any{"aggregate": map[string]any{"name": "cache-rack"}})
	if code != http.StatusOK {
		t.Fatalf("aggregate create %d %v", code, body)
	}
	agg := fmt.Sprint(int64(body["aggregate"].(map[string]any)["id"].(float64)))
	if code, body := computeCall(t, a, "POST", "/os-aggregates/"+agg+"/action", admin, "2.81",
		map[string]any{"add_host": map[string]any{"host": a.config.NodeName}}); code != http.StatusOK {
		t.Fatalf("add host %d %v", code, body)
	}

	// The dev host's fake driver keeps no image files: run its
	// pre-cacher over a real cache.
	cache, err := a.newImageCache(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	p := imagecache.NewPrecacher(a.rpc, a.clients[0].HostID, cache, a.logger.Named("precache"), stop)
	go func() {
		defer close(done)
		p.Run()
	}()
	t.Cleanup(func() {
		// Shutting the agent down ends the pre-cacher's blocking query.
		close(stop)
		_ = a.Shutdown()
		<-done
	})

	if code, body := computeCall(t, a, "POST", "/os-aggregates/"+agg+"/images", admin, "2.81",
		map[string]any{"cache": []any{map[string]any{"id": image}}}); code != http.StatusAccepted {
		t.Fatalf("image cache request %d %v", code, body)
	}
	var rec structs.SingleImageResponse
	if err := a.rpc.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: image}, &rec); err != nil || rec.Image == nil {
		t.Fatalf("image record %v", err)
	}
	waitFor(t, "the image in the cache", func() error {
		for _, e := range cache.List() {
			if e.HashValue == rec.Image.HashValue && e.Size == rec.Image.Size {
				return nil
			}
		}
		return fmt.Errorf("cache holds %+v", cache.List())
	})
}
