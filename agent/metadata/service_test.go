package metadata_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/agent/metadata"
	"github.com/stratus-cloud/stratus/structs"
)

// TestInstanceSeesOnlyItsOwnMetadata boots two instances on loopback
// fixed IPs: each one, asking from its own address, gets its own
// OpenStack and EC2 metadata; an address no instance holds gets 404.
func TestInstanceSeesOnlyItsOwnMetadata(t *testing.T) {
	c := startCluster(t)
	a := c.boot(t, "alpha", "127.0.0.42", func(r *structs.InstanceCreateRequest) {
		r.UserData = "#cloud-config\nhostname: alpha\n"
		r.Metadata = map[string]string{"role": "web"}
	})
	b := c.boot(t, "beta", "127.0.0.43", nil)
	fromA, fromB := clientFrom("127.0.0.42"), clientFrom("127.0.0.43")
	checkOpenStack(t, c, a, b, fromA, fromB)
	checkEC2(t, c, a, fromA, fromB)

	// Not an instance: 404 for all but the version list.
	stranger := clientFrom("127.0.0.99")
	for _, p := range []string{"/openstack/latest/meta_data.json", "/latest/meta-data/instance-id", "/openstack"} {
		if status, _ := fetch(t, stranger, http.MethodGet, c.base+p, "", nil); status != http.StatusNotFound {
			t.Errorf("a stranger's GET %s = %d, want 404", p, status)
		}
	}
	if got := get(t, stranger, c.base+"/"); !strings.HasSuffix(got, "2009-04-04\nlatest") {
		t.Errorf("/ lists %q", got)
	}
	for _, p := range []string{"/openstack/1999-01-01/meta_data.json", "/2001-01-01/meta-data/", "/latest/meta-data/nothing"} {
		if status, _ := fetch(t, fromA, http.MethodGet, c.base+p, "", nil); status != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, status)
		}
	}
}

// checkOpenStack checks the OpenStack format as alpha (a) and beta (b)
// read it from their own addresses.
func checkOpenStack(t *testing.T, c *cluster, a, b *structs.Instance, fromA, fromB *http.Client) {
	t.Helper()
	var md map[string]any
	if err := json.Unmarshal([]byte(get(t, fromA, c.base+"/openstack/latest/meta_data.json")), &md); err != nil {
		t.Fatal(err)
	}
	keys, _ := md["public_keys"].(map[string]any)
	if md["uuid"] != a.ID || md["name"] != "alpha" || md["hostname"] != "alpha.novalocal" || md["project_id"] != testProject ||
		keys["mykey"] != c.pubKey || md["availability_zone"] != "nova" || fmt.Sprint(md["meta"]) != "map[role:web]" {
		t.Fatalf("alpha's meta_data.json: %v", md)
	}
	if err := json.Unmarshal([]byte(get(t, fromB, c.base+"/openstack/latest/meta_data.json")), &md); err != nil || md["uuid"] != b.ID {
		t.Fatalf("beta's meta_data.json: %v %v", md, err)
	}
	// Older versions have fewer keys; every version Nova serves answers.
	var old map[string]any
	if err := json.Unmarshal([]byte(get(t, fromA, c.base+"/openstack/2012-08-10/meta_data.json")), &old); err != nil {
		t.Fatal(err)
	}
	if _, ok := old["project_id"]; ok || old["uuid"] != a.ID {
		t.Errorf("2012-08-10 meta_data.json: %v", old)
	}
	versions := strings.Split(get(t, fromA, c.base+"/openstack"), "\n")
	for _, v := range versions {
		get(t, fromA, c.base+"/openstack/"+v+"/meta_data.json")
	}
	if !slices.Contains(versions, "2018-08-27") || versions[len(versions)-1] != "latest" {
		t.Errorf("/openstack lists %v", versions)
	}
	if got := get(t, fromA, c.base+"/openstack/latest/user_data"); got != "#cloud-config\nhostname: alpha\n" {
		t.Errorf("user_data %q", got)
	}
	if status, _ := fetch(t, fromB, http.MethodGet, c.base+"/openstack/latest/user_data", "", nil); status != http.StatusNotFound {
		t.Errorf("beta, without user data, reads user_data: %d", status)
	}
	listing := get(t, fromA, c.base+"/openstack/2018-08-27")
	if listing != "meta_data.json\nuser_data\npassword\nvendor_data.json\nnetwork_data.json\nvendor_data2.json" {
		t.Errorf("/openstack/2018-08-27 lists %q", listing)
	}
	var nd struct {
		Links    []map[string]any `json:"links"`
		Networks []map[string]any `json:"networks"`
		Services []map[string]any `json:"services"`
	}
	if err := json.Unmarshal([]byte(get(t, fromA, c.base+"/openstack/latest/network_data.json")), &nd); err != nil {
		t.Fatal(err)
	}
	if len(nd.Links) != 1 || len(nd.Networks) != 1 || nd.Networks[0]["ip_address"] != "127.0.0.42" ||
		nd.Networks[0]["netmask"] != "255.255.255.0" || nd.Networks[0]["network_id"] != c.netID ||
		len(nd.Services) != 1 || nd.Services[0]["address"] != "127.0.0.53" {
		t.Errorf("network_data.json %+v", nd)
	}
	for _, f := range []string{"vendor_data.json", "vendor_data2.json"} {
		if got := get(t, fromA, c.base+"/openstack/latest/"+f); got != "{}" {
			t.Errorf("%s = %s", f, got)
		}
	}

}

// checkEC2 checks the EC2 format: the tree, its listings and leaves.
func checkEC2(t *testing.T, c *cluster, a *structs.Instance, fromA, fromB *http.Client) {
	t.Helper()
	if got := get(t, fromA, c.base+"/latest/meta-data/local-ipv4"); got != "127.0.0.42" {
		t.Errorf("local-ipv4 %q", got)
	}
	if got := get(t, fromB, c.base+"/latest/meta-data/local-ipv4"); got != "127.0.0.43" {
		t.Errorf("beta's local-ipv4 %q", got)
	}
	wantID := "i-" + strings.ReplaceAll(a.ID, "-", "")[:8]
	if got := get(t, fromA, c.base+"/2009-04-04/meta-data/instance-id"); got != wantID {
		t.Errorf("instance-id %q, want %q", got, wantID)
	}
	dir := strings.Split(get(t, fromA, c.base+"/latest/meta-data/"), "\n")
	for _, want := range []string{"hostname", "instance-id", "local-ipv4", "placement/", "public-keys/", "block-device-mapping/"} {
		if !slices.Contains(dir, want) {
			t.Errorf("meta-data/ lists %v, without %s", dir, want)
		}
	}
	if got := get(t, fromA, c.base+"/latest/meta-data/public-keys/"); got != "0=mykey" {
		t.Errorf("public-keys/ %q", got)
	}
	if got := get(t, fromA, c.base+"/latest/meta-data/public-keys/0/openssh-key"); got != c.pubKey {
		t.Errorf("openssh-key %q", got)
	}
	if got := get(t, fromA, c.base+"/latest/meta-data/placement/availability-zone"); got != "nova" {
		t.Errorf("availability-zone %q", got)
	}
	if got := get(t, fromA, c.base+"/latest/user-data"); !strings.HasPrefix(got, "#cloud-config") {
		t.Errorf("user-data %q", got)
	}
	if got := get(t, fromA, c.base+"/latest"); got != "meta-data/\nuser-data" {
		t.Errorf("/latest lists %q", got)
	}
	if got := get(t, fromB, c.base+"/1.0/meta-data/hostname"); got != "beta.novalocal" {
		t.Errorf("beta's 1.0 hostname %q", got)
	}
}

// TestProxiedRequestsNeedTheSharedSecret checks Nova's proxy path: a
// request signed with the shared secret gets the instance it names; a
// forged signature is refused with 403, another tenant's with 404.
func TestProxiedRequestsNeedTheSharedSecret(t *testing.T) {
	c := startCluster(t)
	a := c.boot(t, "gamma", "127.0.0.44", nil)
	proxy := clientFrom("127.0.0.1")
	signed := func(id, sig, tenant string) http.Header {
		h := http.Header{}
		h.Set("X-Instance-ID", id)
		h.Set("X-Instance-ID-Signature", sig)
		h.Set("X-Forwarded-For", "127.0.0.44")
		if tenant != "" {
			h.Set("X-Tenant-ID", tenant)
		}
		return h
	}
	status, body := fetch(t, proxy, http.MethodGet, c.base+"/openstack/latest/meta_data.json", "",
		signed(a.ID, metadata.Sign(testSecret, a.ID), testProject))
	var md map[string]any
	if status != http.StatusOK || json.Unmarshal([]byte(body), &md) != nil || md["uuid"] != a.ID {
		t.Fatalf("signed request = %d %s", status, body)
	}
	forged := []http.Header{
		signed(a.ID, metadata.Sign("guessed", a.ID), testProject),
		signed(a.ID, strings.Repeat("0", 64), testProject),
		signed(a.ID, "", testProject),
	}
	for _, h := range forged {
		if status, body := fetch(t, proxy, http.MethodGet, c.base+"/openstack/latest/meta_data.json", "", h); status != http.StatusForbidden &&
			!(h.Get("X-Instance-ID-Signature") == "" && status == http.StatusBadRequest) {
			t.Errorf("forged signature %q = %d %s", h.Get("X-Instance-ID-Signature"), status, body)
		}
	}
	if status, _ := fetch(t, proxy, http.MethodGet, c.base+"/latest/meta-data/instance-id", "",
		signed(a.ID, metadata.Sign(testSecret, a.ID), "someone-else")); status != http.StatusNotFound {
		t.Errorf("another tenant's signed request = %d, want 404", status)
	}
	if status, _ := fetch(t, proxy, http.MethodGet, c.base+"/latest/meta-data/instance-id", "",
		signed(a.ID, metadata.Sign(testSecret, a.ID), "")); status != http.StatusBadRequest {
		t.Errorf("a signed request without X-Tenant-ID = %d, want 400", status)
	}
	missing := "00000000-0000-0000-0000-000000000000"
	if status, _ := fetch(t, proxy, http.MethodGet, c.base+"/latest/meta-data/instance-id", "",
		signed(missing, metadata.Sign(testSecret, missing), testProject)); status != http.StatusNotFound {
		t.Errorf("a signed request for no instance = %d, want 404", status)
	}
}

// TestPasswordIsPostedOnce posts a guest's password: the first post
// wins, a second is a conflict, os-server-password's clear (the servers'
// Instance.SetPassword with Clear) lets the guest post again.
func TestPasswordIsPostedOnce(t *testing.T) {
	c := startCluster(t)
	a := c.boot(t, "delta", "127.0.0.45", nil)
	guest := clientFrom("127.0.0.45")
	url := c.base + "/openstack/latest/password"
	if got := get(t, guest, url); got != "" {
		t.Fatalf("password before any post: %q", got)
	}
	secret := strings.Repeat("c2VjcmV0", 90) // 720 bytes: three chunks
	if status, body := fetch(t, guest, http.MethodPost, url, secret, nil); status != http.StatusOK {
		t.Fatalf("first post = %d %s", status, body)
	}
	if status, _ := fetch(t, guest, http.MethodPost, url, "another", nil); status != http.StatusConflict {
		t.Fatalf("second post = %d, want 409", status)
	}
	if got := get(t, guest, c.base+"/openstack/2013-04-04/password"); got != secret {
		t.Fatalf("password reads %q", got)
	}
	var got structs.SingleInstanceResponse
	if err := c.srv.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: a.ID}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Instance.Password() != secret || len(got.Instance.SystemMetadata["password_0"]) != structs.PasswordChunkLength {
		t.Fatalf("system metadata %v", got.Instance.SystemMetadata)
	}
	var out structs.GenericResponse
	if err := c.srv.RPC("Instance.SetPassword", &structs.InstancePasswordRequest{InstanceID: a.ID, Clear: true}, &out); err != nil {
		t.Fatal(err)
	}
	if got := get(t, guest, url); got != "" {
		t.Fatalf("password after clear: %q", got)
	}
	if status, _ := fetch(t, guest, http.MethodPost, url, strings.Repeat("x", structs.MaxPasswordSize+1), nil); status != http.StatusBadRequest {
		t.Fatalf("oversized post = %d, want 400", status)
	}
	if status, _ := fetch(t, guest, http.MethodPost, url, "new", nil); status != http.StatusOK {
		t.Fatalf("post after clear = %d", status)
	}
	if status, _ := fetch(t, guest, http.MethodPost, c.base+"/openstack/2012-08-10/password", "x", nil); status != http.StatusNotFound &&
		status != http.StatusConflict {
		t.Fatalf("post to a version without password = %d", status)
	}
	if status, _ := fetch(t, guest, http.MethodPut, url, "x", nil); status != http.StatusMethodNotAllowed {
		t.Fatalf("PUT password = %d, want 405", status)
	}
}
