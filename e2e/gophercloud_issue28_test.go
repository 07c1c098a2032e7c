package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/remoteconsoles"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// TestGophercloudExtensionsQuotasAndNoVNC drives issue 28's Compute API
// paths through gophercloud: Nova's extension list, a quota update with
// the fields Nova keeps but no longer enforces, microversion 2.100 and
// a noVNC URL opening noVNC's own page.
func TestGophercloudExtensionsQuotasAndNoVNC(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startAgent(t, "gc28", "--dev")
	admin, _ := computeClient(t, ctx, dev.http, "admin")
	demo, provider := computeClient(t, ctx, dev.http, "demo")

	var aliases []string
	err := extensions.List(demo).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		exts, err := extensions.ExtractExtensions(p)
		for _, e := range exts {
			aliases = append(aliases, e.Alias)
		}
		return true, err
	})
	if err != nil || len(aliases) != 99 || aliases[0] != "NMN" {
		t.Fatalf("extensions %v: %v", aliases, err)
	}
	if e, err := extensions.Get(ctx, demo, "os-server-external-events").Extract(); err != nil || e.Name != "ServerExternalEvents" {
		t.Fatalf("os-server-external-events %+v %v", e, err)
	}
	if _, err := extensions.Get(ctx, demo, "no-such").Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("unknown alias: %v", err)
	}

	auth := provider.GetAuthResult().(tokens.CreateResult)
	project, err := auth.ExtractProject()
	if err != nil {
		t.Fatal(err)
	}
	n := func(v int) *int { return &v }
	q, err := quotasets.Update(ctx, admin, project.ID, quotasets.UpdateOpts{FixedIPs: n(3), FloatingIPs: n(4), SecurityGroups: n(5),
		SecurityGroupRules: n(6), InjectedFiles: n(7), InjectedFileContentBytes: n(8), InjectedFilePathBytes: n(9), Instances: n(12)}).Extract()
	if err != nil || q.FixedIPs != 3 || q.FloatingIPs != 4 || q.InjectedFilePathBytes != 9 || q.Instances != 12 {
		t.Fatalf("quota update %+v %v", q, err)
	}

	demo.Microversion = "2.100"
	s, err := servers.Create(ctx, demo, servers.CreateOpts{Name: "gc28", ImageRef: "cirros", FlavorRef: "1", Networks: "none"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if err := servers.WaitForStatus(ctx, demo, s.ID, "ACTIVE"); err != nil {
		t.Fatal(err)
	}
	got := servers.Get(ctx, demo, s.ID)
	body, _ := got.Body.(map[string]any)
	view, _ := body["server"].(map[string]any)
	image, _ := view["image"].(map[string]any)
	if hints, ok := view["scheduler_hints"].(map[string]any); got.Err != nil || !ok || len(hints) != 0 || image["properties"] == nil {
		t.Fatalf("2.100 server %v: %v", got.Body, got.Err)
	}
	rc, err := remoteconsoles.Create(ctx, demo, s.ID, remoteconsoles.CreateOpts{Protocol: remoteconsoles.ConsoleProtocolVNC,
		Type: remoteconsoles.ConsoleTypeNoVNC}).Extract()
	if err != nil || !strings.Contains(rc.URL, "/ui/vendor/novnc/vnc_lite.html?path=console%2Fwebsockify%3Ftoken%3D") {
		t.Fatalf("noVNC console %+v %v", rc, err)
	}
	resp, err := http.Get(rc.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "'sha256-") {
		t.Fatalf("noVNC page: %d %v", resp.StatusCode, resp.Header)
	}
}
