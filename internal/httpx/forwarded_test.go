package httpx

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestForwarding: X-Forwarded-Proto/Host are believed from a trusted
// proxy only, and removed from anyone else's request; public_url wins
// over both.
func TestForwarding(t *testing.T) {
	trusted, err := NewForwarding([]string{"10.0.0.0/8", "2001:db8::1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	public, err := NewForwarding([]string{"10.0.0.0/8"}, "https://cloud.example.com/stratus/")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, remote, proto, host string
		tls                       bool
		f                         *Forwarding
		want                      string
		keepsHeaders              bool
	}{
		{"trusted v4", "10.1.2.3:5000", "https", "cloud.example.com", false, trusted, "https://cloud.example.com", true},
		{"trusted v6", "[2001:db8::1]:5000", "https", "", false, trusted, "https://agent:8774", true},
		{"trusted mapped v4", "[::ffff:10.1.2.3]:5000", "https", "", false, trusted, "https://agent:8774", true},
		{"untrusted", "192.0.2.1:5000", "https", "evil.example", false, trusted, "http://agent:8774", false},
		{"untrusted on TLS", "192.0.2.1:5000", "http", "evil.example", true, trusted, "https://agent:8774", false},
		{"no proxies", "10.1.2.3:5000", "https", "evil.example", false, &Forwarding{}, "http://agent:8774", false},
		{"bad proto", "10.1.2.3:5000", "gopher", "", false, trusted, "http://agent:8774", true},
		{"host with a path", "10.1.2.3:5000", "https", "evil.example/x", false, trusted, "https://agent:8774", true},
		{"proxy chain", "10.1.2.3:5000", "https, http", "a.example, b.example", false, trusted, "https://a.example", true},
		{"public url", "192.0.2.1:5000", "http", "evil.example", false, public, "https://cloud.example.com/stratus", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "http://agent:8774/compute/", nil)
			r.RemoteAddr = c.remote
			if c.tls {
				r.TLS = &tls.ConnectionState{}
			}
			r.Header.Set("X-Forwarded-Proto", c.proto)
			if c.host != "" {
				r.Header.Set("X-Forwarded-Host", c.host)
			}
			var got string
			var seen http.Header
			c.f.Middleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got, seen = ExternalBase(r), r.Header
			})).ServeHTTP(httptest.NewRecorder(), r)
			if got != c.want {
				t.Errorf("ExternalBase %q, want %q", got, c.want)
			}
			if kept := seen.Get("X-Forwarded-Proto") != ""; kept != c.keepsHeaders {
				t.Errorf("X-Forwarded-Proto kept %v, want %v", kept, c.keepsHeaders)
			}
		})
	}
	// Outside the middleware: the connection's own scheme and Host.
	r := httptest.NewRequest(http.MethodGet, "http://agent:8774/", nil)
	r.Header.Set("X-Forwarded-Proto", "https")
	if got := ExternalBase(r); got != "http://agent:8774" {
		t.Errorf("ExternalBase without the middleware %q", got)
	}
}

// TestClientAddr: behind a trusted proxy the client is the rightmost
// X-Forwarded-For address that is not a proxy; anyone else's header is
// ignored.
func TestClientAddr(t *testing.T) {
	f, err := NewForwarding([]string{"10.0.0.0/8"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ remote, xff, want string }{
		{"10.0.0.1:1", "203.0.113.9, 198.51.100.7, 10.0.0.2", "198.51.100.7"},
		{"10.0.0.1:1", "", "10.0.0.1"},
		{"10.0.0.1:1", "10.0.0.3", "10.0.0.1"},
		{"10.0.0.1:1", "garbage", "10.0.0.1"},
		{"192.0.2.1:1", "198.51.100.7", "192.0.2.1"},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://agent/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		var got string
		f.Middleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = ClientAddr(r) })).ServeHTTP(httptest.NewRecorder(), r)
		if got != c.want {
			t.Errorf("%s with X-Forwarded-For %q: client %q, want %q", c.remote, c.xff, got, c.want)
		}
	}
}

// TestForwardingConfigErrors: bad settings are refused with the name of
// the setting.
func TestForwardingConfigErrors(t *testing.T) {
	for _, c := range []struct {
		proxies []string
		public  string
	}{
		{[]string{"10.0.0.0/33"}, ""},
		{[]string{"proxy.example"}, ""},
		{nil, "cloud.example.com"},
		{nil, "ftp://cloud.example.com"},
		{nil, "https://cloud.example.com/?x=1"},
	} {
		if _, err := NewForwarding(c.proxies, c.public); err == nil {
			t.Errorf("NewForwarding(%q, %q) accepted", c.proxies, c.public)
		}
	}
}
