package agent

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// tlsProxy is a TLS-terminating reverse proxy in front of target (an
// http:// URL), dialling it from 127.0.0.2 so that an agent can trust
// the proxy's address and not the test's own (127.0.0.1). keepHost
// forwards the client's Host header (an S3 signature covers it), as
// nginx's proxy_set_header Host $host; otherwise the proxy asks with the
// target's and says the client's in X-Forwarded-Host.
func tlsProxy(t *testing.T, target string, keepHost bool) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.SetXForwarded()
			if keepHost {
				pr.Out.Host = pr.In.Host
			}
		},
		Transport: &http.Transport{DialContext: dialer.DialContext},
	}
	srv := httptest.NewTLSServer(rp)
	t.Cleanup(srv.Close)
	return srv
}

// absoluteURLs are the http(s) URLs a JSON or XML answer contains.
var absoluteURLs = regexp.MustCompile(`https?://[^"\s<>\\]+`)

// getLinks GETs path through client and answers the URLs in the body.
func getLinks(t *testing.T, client *http.Client, base, path, token string, hdr map[string]string) []string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	var out []string
	for _, l := range absoluteURLs.FindAllString(string(body), -1) {
		// The API reference a versions document points to is not ours.
		if !strings.Contains(l, "://docs.openstack.org/") {
			out = append(out, l)
		}
	}
	return out
}

// TestLinksBehindTLSProxy: behind a TLS-terminating reverse proxy whose
// address is in http_trusted_proxies, the Keystone catalog, every API's
// versions document and links, and S3's multipart Location are https
// URLs of the proxy; a client that is not a trusted proxy cannot steer
// links with X-Forwarded-Proto/Host.
func TestLinksBehindTLSProxy(t *testing.T) {
	t.Parallel()
	on := true
	var logs syncBuf
	a := startDevAgentLogged(t, func(c *Config) {
		c.HTTPTrustedProxies = []string{"127.0.0.2"}
		c.S3 = &S3Config{Listen: "127.0.0.1:0"}
		c.ACL = &ACLConfig{Enabled: &on}
		c.AccessLog = "info"
	}, hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &logs}))
	waitDevAgentReady(t, a)
	proxy := tlsProxy(t, "http://"+a.HTTPAddr(), false)
	client := proxy.Client()
	tok := keystoneToken(t, a, "admin")

	resp, err := client.Post(proxy.URL+"/identity/v3/auth/tokens", "application/json", strings.NewReader(
		`{"auth":{"identity":{"methods":["token"],"token":{"id":"`+tok+`"}},"scope":{"project":{"name":"admin","domain":{"id":"default"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	catalog, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("token through the proxy: %d %s", resp.StatusCode, catalog)
	}
	links := absoluteURLs.FindAllString(string(catalog), -1)
	if len(links) < 5 {
		t.Fatalf("catalog has %d endpoint URLs: %s", len(links), catalog)
	}
	paths := []string{"/identity/", "/identity/v3", "/compute/", "/compute/v2.1/", "/compute/v2.1/flavors",
		"/image/", "/image/v2", "/network/", "/network/v2.0", "/volume/", "/volume/v3"}
	for _, p := range paths {
		got := getLinks(t, client, proxy.URL, p, tok, nil)
		if len(got) == 0 {
			t.Errorf("GET %s through the proxy has no links", p)
		}
		links = append(links, got...)
	}
	for _, l := range links {
		if !strings.HasPrefix(l, proxy.URL+"/") {
			t.Errorf("link %s behind the proxy, want under %s", l, proxy.URL)
		}
	}

	// The same X-Forwarded-* from a client that is not a proxy.
	forged := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}
	for _, p := range paths {
		for _, l := range getLinks(t, http.DefaultClient, "http://"+a.HTTPAddr(), p, tok, forged) {
			if !strings.HasPrefix(l, "http://"+a.HTTPAddr()+"/") {
				t.Errorf("GET %s with forged X-Forwarded-*: link %s", p, l)
			}
		}
	}

	t.Run("s3", func(t *testing.T) { checkS3Location(t, a, tok) })
	t.Run("access log", func(t *testing.T) { checkAccessLogCallers(t, a, tok, logs.String()) })
}

// checkAccessLogCallers: the access log names the user and project a
// request authenticated as, on every API the test called.
func checkAccessLogCallers(t *testing.T, a *Agent, tok, logs string) {
	userID, projectID := whoami(t, a, tok)
	who := "user=" + userID + " project=" + projectID
	for _, want := range []string{`api=compute method=GET route="GET /flavors"`, `api=network method=GET route="GET /v2.0"`,
		`api=s3 method=PUT route="PUT /{bucket}"`, `api=identity method=POST route="POST /v3/auth/tokens"`} {
		found := false
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, want) && strings.Contains(line, who) {
				found = true
			}
		}
		if !found {
			t.Errorf("no access log line %s with %s", want, who)
		}
	}
	// Behind the proxy (127.0.0.2) the client is who it forwarded for.
	if strings.Contains(logs, "remote=127.0.0.2") {
		t.Error("the access log names the trusted proxy, not the client it forwarded for")
	}
	if !regexp.MustCompile(`api=volume method=GET route="GET /v3" status=200 .* user="" project=""\n`).MatchString(logs) {
		t.Errorf("a public route's access log line should name no user:\n%s", logs)
	}
}

// checkS3Location completes a multipart upload through a TLS proxy in
// front of the S3 listener: its Location is the proxy's https URL.
func checkS3Location(t *testing.T, a *Agent, tok string) {
	userID, projectID := whoami(t, a, tok)
	cred := ec2Credential(t, a, tok, userID, projectID)
	proxy := tlsProxy(t, "http://"+a.S3Addr(), true)
	mc, err := minio.New(strings.TrimPrefix(proxy.URL, "https://"), &minio.Options{
		Creds: credentials.NewStaticV4(cred.Access, cred.Secret, ""), Region: "us-east-1", Secure: true,
		Transport: proxy.Client().Transport, BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := mc.MakeBucket(ctx, "links", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	core := minio.Core{Client: mc}
	id, err := core.NewMultipartUpload(ctx, "links", "a b.txt", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	part, err := core.PutObjectPart(ctx, "links", "a b.txt", id, 1, bytes.NewReader([]byte("hello")), 5, minio.PutObjectPartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := core.CompleteMultipartUpload(ctx, "links", "a b.txt", id,
		[]minio.CompletePart{{PartNumber: 1, ETag: part.ETag}}, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := proxy.URL + "/links/a%20b.txt"; info.Location != want {
		t.Errorf("multipart Location %q, want %q", info.Location, want)
	}
}
