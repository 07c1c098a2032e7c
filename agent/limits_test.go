package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/native"
)

// limitedAgent starts a dev agent with the limits block; it waits for the
// seeded flavors drawing on a fresh credential per poll, so the waiting
// does not spend the test's rate limit.
func limitedAgent(t *testing.T, limits *LimitsConfig) *Agent {
	t.Helper()
	zero := 0
	cfg := &Config{DevMode: true, NodeName: "limits", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports: &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero}, Limits: limits}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	limitsWait(t, "seeded flavors", func() error {
		req, _ := http.NewRequest("GET", a.url("/v1/flavors"), nil)
		req.Header.Set("X-Stratus-Token", freshToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var fl []json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&fl); err != nil {
			return err
		}
		if len(fl) != 5 {
			return fmt.Errorf("%d flavors", len(fl))
		}
		return nil
	})
	return a
}

var tokenSeq atomic.Int64

// freshToken is a credential no request has used yet: its own bucket.
func freshToken() string { return fmt.Sprintf("limits-test-%d", tokenSeq.Add(1)) }

// limitsWait is waitFor with room for a loaded machine.
func limitsWait(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func limitsPtr[T any](v T) *T { return &v }

// strictLimits allow three requests per credential for the length of a
// test and cut slow clients off after a second.
func strictLimits() *LimitsConfig {
	return &LimitsConfig{HTTPRate: limitsPtr(0.0001), HTTPBurst: limitsPtr(3), HTTPMaxHeaderBytes: limitsPtr(8192),
		HTTPReadHeaderTimeout: "1s", HTTPBodyReadTimeout: "1s"}
}

// send makes one request with headers and answers status, headers, body.
func limitsSend(t *testing.T, method, url string, hdr map[string]string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// jsonPath digs a value out of a JSON body: path "overLimit.code".
func limitsJSON(t *testing.T, body []byte, path string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, body)
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %s in %s", path, body)
		}
		v = m[k]
	}
	return v
}

func TestRateLimitAnswersInEachAPIsFormat(t *testing.T) {
	t.Parallel()
	a := limitedAgent(t, strictLimits())
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		check              func(t *testing.T, code int, hdr http.Header, body []byte)
	}{
		{"compute", "GET", "/compute/v2.1/flavors", map[string]string{"X-Auth-Token": "nova-tok"}, func(t *testing.T, code int, hdr http.Header, body []byte) {
			if code != 429 || limitsJSON(t, body, "overLimit.code") != float64(429) || limitsJSON(t, body, "overLimit.retryAfter") != hdr.Get("Retry-After") {
				t.Fatalf("compute: %d %s", code, body)
			}
		}},
		{"volume", "GET", "/volume/v3/p1/volumes", map[string]string{"X-Auth-Token": "cinder-tok"}, func(t *testing.T, code int, hdr http.Header, body []byte) {
			if code != 429 || limitsJSON(t, body, "overLimit.code") != float64(429) || limitsJSON(t, body, "overLimit.retryAfter") != hdr.Get("Retry-After") {
				t.Fatalf("volume: %d %s", code, body)
			}
		}},
		{"identity", "GET", "/identity/v3/projects", map[string]string{"X-Auth-Token": "keystone-tok"}, func(t *testing.T, code int, _ http.Header, body []byte) {
			if code != 429 || limitsJSON(t, body, "error.code") != float64(429) || limitsJSON(t, body, "error.title") != "Too Many Requests" {
				t.Fatalf("identity: %d %s", code, body)
			}
		}},
		{"image", "GET", "/image/v2/images", map[string]string{"X-Auth-Token": "glance-tok"}, func(t *testing.T, code int, _ http.Header, body []byte) {
			if code != 429 || limitsJSON(t, body, "code") != "429 Too Many Requests" {
				t.Fatalf("image: %d %s", code, body)
			}
		}},
		{"network", "GET", "/network/v2.0/networks", map[string]string{"X-Auth-Token": "neutron-tok"}, func(t *testing.T, code int, _ http.Header, body []byte) {
			if code != 429 || limitsJSON(t, body, "NeutronError.type") != "HTTPTooManyRequests" {
				t.Fatalf("network: %d %s", code, body)
			}
		}},
		{"s3", "GET", "/s3/", map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDLIMITS/20261130/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00"},
			func(t *testing.T, code int, _ http.Header, body []byte) {
				var e struct{ Code string }
				if err := xml.Unmarshal(body, &e); code != 503 || err != nil || e.Code != "SlowDown" {
					t.Fatalf("s3: %d %v %s", code, err, body)
				}
			}},
		{"ec2", "GET", "/ec2/?Action=DescribeRegions&Version=2016-11-15",
			map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDEC2LIMITS/20261130/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=00"},
			func(t *testing.T, code int, _ http.Header, body []byte) {
				var e struct {
					Errors struct{ Error struct{ Code string } }
				}
				if err := xml.Unmarshal(body, &e); code != 503 || err != nil || e.Errors.Error.Code != "RequestLimitExceeded" {
					t.Fatalf("ec2: %d %v %s", code, err, body)
				}
			}},
		{"native", "GET", "/v1/flavors", map[string]string{"X-Stratus-Token": "native-tok"}, func(t *testing.T, code int, _ http.Header, body []byte) {
			if code != 429 || limitsJSON(t, body, "kind") != "rate limited" {
				t.Fatalf("native: %d %s", code, body)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range 3 {
				if code, _, body := limitsSend(t, c.method, a.url(c.path), c.hdr, nil); code == 429 || code == 503 {
					t.Fatalf("request %d of the burst refused: %d %s", i, code, body)
				}
			}
			code, hdr, body := limitsSend(t, c.method, a.url(c.path), c.hdr, nil)
			if hdr.Get("Retry-After") == "" {
				t.Fatalf("no Retry-After: %d %v %s", code, hdr, body)
			}
			c.check(t, code, hdr, body)
			// Another credential has its own bucket.
			other := map[string]string{"X-Auth-Token": freshToken()}
			if code, _, body := limitsSend(t, c.method, a.url(c.path), other, nil); code == 429 || code == 503 {
				t.Fatalf("another credential is limited too: %d %s", code, body)
			}
		})
	}
}

// rawRequest writes head (and no body) on a fresh connection and reads
// one response, or the error that ended the connection.
func limitsRaw(t *testing.T, a *Agent, head string) (*http.Response, []byte, error) {
	t.Helper()
	conn, err := net.Dial("tcp", a.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(90 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return nil, nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body, nil
}

func TestBodyOverTheLimitIsRefusedUnread(t *testing.T) {
	t.Parallel()
	a := limitedAgent(t, strictLimits())
	cases := []struct {
		name, method, path string
		status             int
		check              func(t *testing.T, body []byte)
	}{
		{"compute", "POST", "/compute/v2.1/servers", 413, func(t *testing.T, body []byte) {
			if limitsJSON(t, body, "overLimit.code") != float64(413) {
				t.Fatalf("compute: %s", body)
			}
		}},
		{"identity", "POST", "/identity/v3/auth/tokens", 413, func(t *testing.T, body []byte) {
			if limitsJSON(t, body, "error.code") != float64(413) {
				t.Fatalf("identity: %s", body)
			}
		}},
		{"image", "POST", "/image/v2/images", 413, func(t *testing.T, body []byte) {
			if limitsJSON(t, body, "code") != "413 Request Entity Too Large" {
				t.Fatalf("image: %s", body)
			}
		}},
		{"network", "POST", "/network/v2.0/networks", 413, func(t *testing.T, body []byte) {
			if limitsJSON(t, body, "NeutronError.type") != "HTTPRequestEntityTooLarge" {
				t.Fatalf("network: %s", body)
			}
		}},
		{"native", "POST", "/v1/flavors", 413, func(t *testing.T, body []byte) {
			if limitsJSON(t, body, "kind") != string(native.KindTooLarge) {
				t.Fatalf("native: %s", body)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The declared body (64 MiB) is never sent: the answer
			// comes from the headers alone.
			head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nX-Auth-Token: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{",
				c.method, c.path, freshToken(), 64<<20)
			resp, body, err := limitsRaw(t, a, head)
			if err != nil {
				t.Fatalf("no answer before the body: %v", err)
			}
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			c.check(t, body)
		})
	}

	t.Run("chunked body past the limit", func(t *testing.T) {
		big := `{"ID":"h","Name":"h","VCPUs":1,"MemoryMB":1,"Description":"` + strings.Repeat("x", 2<<20) + `"}`
		// A reader without a length goes out chunked.
		code, _, body := limitsSend(t, "POST", a.url("/v1/flavors"), map[string]string{"X-Stratus-Token": freshToken()},
			io.MultiReader(strings.NewReader(big)))
		if code != 413 {
			t.Fatalf("chunked: %d %s", code, body)
		}
	})

	t.Run("image data is streamed, not bounded", func(t *testing.T) {
		data := bytes.Repeat([]byte("x"), DefaultMaxBodyBytes*2)
		code, _, body := limitsSend(t, "PUT", a.url("/image/v2/images/00000000-0000-0000-0000-000000000000/file"),
			map[string]string{"X-Auth-Token": freshToken(), "Content-Type": "application/octet-stream"}, bytes.NewReader(data))
		if code == 413 {
			t.Fatalf("image data refused by the body limit: %s", body)
		}
	})
}

func TestSlowClientsAreCutOff(t *testing.T) {
	t.Parallel()
	a := limitedAgent(t, strictLimits())

	t.Run("headers dribbled", func(t *testing.T) {
		conn, err := net.Dial("tcp", a.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "GET /v1/flavors HTTP/1.1\r\nHost: x\r\nX-A: "); err != nil {
			t.Fatal(err)
		}
		// Dribble a byte of a header that never ends until the server
		// hangs up; the test's bound is far past the 1s timeout.
		deadline := time.Now().Add(90 * time.Second)
		for {
			if time.Now().After(deadline) {
				t.Fatal("the server still holds a connection whose headers never end")
			}
			_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			var b [512]byte
			n, err := conn.Read(b[:])
			if n > 0 || (err != nil && !limitsIsTimeout(err)) {
				// Go answers 408 or just closes; either way the
				// connection is over.
				break
			}
			if _, err := conn.Write([]byte("a")); err != nil {
				break
			}
		}
	})

	t.Run("body stalled", func(t *testing.T) {
		head := fmt.Sprintf("POST /v1/flavors HTTP/1.1\r\nHost: x\r\nX-Stratus-Token: %s\r\nContent-Length: 100\r\n\r\n{\"ID\":", freshToken())
		resp, body, err := limitsRaw(t, a, head)
		if err == nil && resp.StatusCode < 400 {
			t.Fatalf("a stalled body was accepted: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("headers too large", func(t *testing.T) {
		head := fmt.Sprintf("GET /v1/flavors HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("b", 64<<10))
		resp, _, err := limitsRaw(t, a, head)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d, want 431", resp.StatusCode)
		}
	})
}

func limitsIsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestLimitsConfig(t *testing.T) {
	t.Parallel()
	bad := []*LimitsConfig{
		{HTTPRate: limitsPtr(-1.0)},
		{HTTPBurst: limitsPtr(0)},
		{HTTPMaxHeaderBytes: limitsPtr(10)},
		{HTTPMaxBodyBytes: limitsPtr(int64(5))},
		{HTTPNativeMaxBodyBytes: limitsPtr(int64(-1))},
		{HTTPReadHeaderTimeout: "soon"},
		{HTTPBodyReadTimeout: "-1s"},
		{HTTPIdleTimeout: "0s"},
	}
	for _, l := range bad {
		cfg := &Config{DevMode: true, DataDir: t.TempDir(), Limits: l}
		if err := cfg.Finalize(); err == nil || !strings.Contains(err.Error(), "limits: ") {
			t.Errorf("%+v: %v, want a limits error", l, err)
		}
	}
	path := t.TempDir() + "/agent.hcl"
	writeFile(t, path, `limits {
  http_rate = 20
  http_burst = 40
  http_max_body_bytes = 65536
  http_read_header_timeout = "5s"
}
`)
	cfg, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DevMode, cfg.DataDir = true, t.TempDir()
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	l, err := cfg.Limits.resolve()
	if err != nil || l.rate != 20 || l.burst != 40 || l.maxBody != 65536 || l.readHeader != 5*time.Second ||
		l.maxNative != DefaultNativeMaxBodyBytes || l.idle != DefaultIdleTimeout {
		t.Fatalf("%+v %v", l, err)
	}
	off := &LimitsConfig{HTTPRate: limitsPtr(0.0)}
	if l, err := newHTTPLimits(&Config{Limits: off}, hclog.NewNullLogger()); err != nil || l.limiter != nil {
		t.Fatalf("http_rate = 0 should turn the limiter off: %+v %v", l, err)
	}
}

func TestRateKeys(t *testing.T) {
	t.Parallel()
	mk := func(hdr map[string]string, query string) *http.Request {
		r, _ := http.NewRequest("GET", "http://x/s3/b"+query, nil)
		r.RemoteAddr = "192.0.2.7:5555"
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		return r
	}
	ip := rateKey(mk(nil, ""))
	if ip != "ip:192.0.2.7" {
		t.Fatalf("anonymous key %q", ip)
	}
	keys := map[string]string{}
	for name, r := range map[string]*http.Request{
		"keystone": mk(map[string]string{"X-Auth-Token": "t1"}, ""),
		"native":   mk(map[string]string{"X-Stratus-Token": "t2"}, ""),
		"bearer":   mk(map[string]string{"Authorization": "Bearer t3"}, ""),
		"sigv4":    mk(map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=AK1/20261130/r/s3/aws4_request, Signature=1"}, ""),
		"sigv2":    mk(map[string]string{"Authorization": "AWS AK2:sig"}, ""),
		"presign":  mk(nil, "?X-Amz-Credential=AK3%2F20261130%2Fr%2Fs3%2Faws4_request"),
	} {
		k := rateKey(r)
		if k == ip || !strings.HasPrefix(k, "cred:") {
			t.Errorf("%s: key %q", name, k)
		}
		if prev, dup := keys[k]; dup {
			t.Errorf("%s and %s share key %q", name, prev, k)
		}
		keys[k] = name
	}
	// The same access key draws on one bucket however it signs.
	if rateKey(mk(map[string]string{"Authorization": "AWS AK1:x"}, "")) != rateKey(mk(map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=AK1/x"}, "")) {
		t.Error("one access key, two buckets")
	}
}
