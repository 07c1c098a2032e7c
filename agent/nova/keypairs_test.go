package nova

import (
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/stratus-cloud/stratus/structs"
)

const importKey = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDx8nkQv/zgGgB4rMYmIf+6A4l6Rr+o/6lHBQdW5aYd44bd8JttDCE/F/pNRr0lRE+PiqSPO8nDPHw0010JeMH9gYgnnFlyY3/OcJ02RhIPyyxYpv9FhY+2YiUkpwFOcLImyrxEsYXpD/0d3ac30bNH6Sw9JD9UZHYcpSxsIbECHw== Generated-by-Nova"

func TestKeypairGenerateAndImport(t *testing.T) {
	h := newHarness(t)
	// 2.1: generated, 200, no type.
	r := h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "", map[string]any{"keypair": map[string]any{"name": "gen"}}).expect(t, 200)
	sameShape(t, "generated", r.body, sample(t, "os-keypairs/keypairs-post-resp.json"))
	kp := r.obj("keypair")
	signer, err := ssh.ParsePrivateKey([]byte(kp["private_key"].(string)))
	if err != nil {
		t.Fatalf("private key: %v", err)
	}
	if got := string(ssh.MarshalAuthorizedKey(signer.PublicKey())); !strings.HasPrefix(kp["public_key"].(string), strings.TrimSpace(got)) {
		t.Fatalf("public key %q does not match the private key's %q", kp["public_key"], got)
	}
	if kp["user_id"] != "u-alice" || len(kp["fingerprint"].(string)) != 47 {
		t.Fatalf("keypair %v", kp)
	}
	if stored := h.rpc.keypairs["u-alice/gen"]; stored == nil || stored.Fingerprint != kp["fingerprint"] || stored.Type != "ssh" {
		t.Fatalf("stored %+v", stored)
	}

	// 2.2: imported, 201, with type; Nova's MD5 fingerprint.
	r = h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "2.2", sample(t, "os-keypairs/v2.2/keypairs-import-post-req.json")).expect(t, 201)
	sameShape(t, "imported", r.body, sample(t, "os-keypairs/v2.2/keypairs-import-post-resp.json"))
	if fp := r.obj("keypair")["fingerprint"]; fp != "1e:2c:9b:56:79:4b:45:77:f9:ca:7a:98:2c:b0:d5:3c" {
		t.Fatalf("fingerprint %v", fp)
	}
	// x509 key pairs are generated as a certificate and its key.
	r = h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "2.2", map[string]any{"keypair": map[string]any{"name": "cert", "type": "x509"}}).expect(t, 201)
	if k := r.obj("keypair"); !strings.HasPrefix(k["public_key"].(string), "-----BEGIN CERTIFICATE-----") || k["type"] != "x509" {
		t.Fatalf("x509 %v", k)
	}
	cert := r.obj("keypair")["public_key"].(string)
	r = h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "2.2", map[string]any{"keypair": map[string]any{"name": "cert2", "type": "x509", "public_key": cert}}).expect(t, 201)
	if r.obj("keypair")["fingerprint"] != h.rpc.keypairs["u-alice/cert"].Fingerprint {
		t.Fatalf("imported certificate fingerprint %v", r.obj("keypair")["fingerprint"])
	}

	h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "", map[string]any{"keypair": map[string]any{"name": "gen"}}).
		fault(t, 409, "conflictingRequest", "Key pair 'gen' already exists.")
	h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "", map[string]any{"keypair": map[string]any{"name": "bad", "public_key": "ssh-rsa nope"}}).
		fault(t, 400, "badRequest", "Keypair data is invalid")
	h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "", map[string]any{"keypair": map[string]any{"name": "a.b"}}).
		fault(t, 400, "badRequest", "Keypair name contains unsafe characters")
	h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "", map[string]any{"keypair": map[string]any{"name": "k", "type": "ssh"}}).
		fault(t, 400, "badRequest", "'type' was unexpected")
	// 2.92: import only, and '@' and '.' in names.
	h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "2.92", map[string]any{"keypair": map[string]any{"name": "k"}}).
		fault(t, 400, "badRequest", "'public_key' is a required property")
	h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "2.92", map[string]any{"keypair": map[string]any{"name": "me@host.example", "public_key": importKey}}).expect(t, 201)
}

func TestKeypairReadDeleteAndUsers(t *testing.T) {
	h := newHarness(t)
	for _, name := range []string{"a", "b", "c"} {
		h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "2.2", map[string]any{"keypair": map[string]any{"name": name, "public_key": importKey}}).expect(t, 201)
	}
	r := h.req("GET", "/compute/v2.1/os-keypairs", memberTok, "", nil).expect(t, 200)
	sameShape(t, "list", r.body, sample(t, "os-keypairs/keypairs-list-resp.json"))
	r = h.req("GET", "/compute/v2.1/os-keypairs", memberTok, "2.2", nil).expect(t, 200)
	sameShape(t, "list 2.2", r.body, sample(t, "os-keypairs/v2.2/keypairs-list-resp.json"))
	if len(r.list("keypairs")) != 3 {
		t.Fatalf("list %s", r.raw)
	}
	// Pages from 2.35.
	r = h.req("GET", "/compute/v2.1/os-keypairs?limit=2", memberTok, "2.35", nil).expect(t, 200)
	if len(r.list("keypairs")) != 2 || !strings.HasSuffix(r.list("keypairs_links")[0].(map[string]any)["href"].(string), "/compute/v2.1/os-keypairs?limit=2&marker=b") {
		t.Fatalf("page %s", r.raw)
	}

	r = h.req("GET", "/compute/v2.1/os-keypairs/a", memberTok, "", nil).expect(t, 200)
	sameShape(t, "show", r.body, sample(t, "os-keypairs/keypairs-get-resp.json"))
	r = h.req("GET", "/compute/v2.1/os-keypairs/a", memberTok, "2.2", nil).expect(t, 200)
	sameShape(t, "show 2.2", r.body, sample(t, "os-keypairs/v2.2/keypairs-get-resp.json"))
	h.req("GET", "/compute/v2.1/os-keypairs/zz", memberTok, "", nil).fault(t, 404, "itemNotFound", "Keypair zz not found for user u-alice")

	// Another user's key pairs: admins only, from 2.10.
	h.req("GET", "/compute/v2.1/os-keypairs/a?user_id=u-alice", otherTok, "2.10", nil).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:os-keypairs:show to be performed.")
	h.req("GET", "/compute/v2.1/os-keypairs/a?user_id=u-alice", otherTok, "2.9", nil).fault(t, 404, "itemNotFound", "u-bob")
	r = h.req("GET", "/compute/v2.1/os-keypairs/a?user_id=u-alice", adminTok, "2.10", nil).expect(t, 200)
	sameShape(t, "show 2.10", r.body, sample(t, "os-keypairs/v2.10/keypairs-get-resp.json"))
	h.req("POST", "/compute/v2.1/os-keypairs", adminTok, "2.10", map[string]any{"keypair": map[string]any{"name": "forbob", "user_id": "u-bob", "public_key": importKey}}).expect(t, 201)
	if h.rpc.keypairs["u-bob/forbob"] == nil {
		t.Fatal("admin's key pair for bob not stored under bob")
	}
	h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "2.10", map[string]any{"keypair": map[string]any{"name": "x", "user_id": "u-bob", "public_key": importKey}}).
		fault(t, 403, "forbidden", "os_compute_api:os-keypairs:create")

	h.req("DELETE", "/compute/v2.1/os-keypairs/a", memberTok, "", nil).expect(t, 202)
	h.req("DELETE", "/compute/v2.1/os-keypairs/b", memberTok, "2.2", nil).expect(t, 204)
	h.req("DELETE", "/compute/v2.1/os-keypairs/b", memberTok, "2.2", nil).fault(t, 404, "itemNotFound", "Keypair b not found")
	if args := h.rpc.lastCall("KeyPair.Delete").(*structs.KeyPairDeleteRequest); args.UserID != "u-alice" {
		t.Fatalf("delete args %+v", args)
	}
}
