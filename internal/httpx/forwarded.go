package httpx

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Links in an API's answers (the Keystone catalog, versions documents,
// Nova/Glance/Neutron/Cinder "links", S3 locations) must name the URL the
// client reached, which behind a TLS-terminating reverse proxy is not the
// one the agent was reached at. X-Forwarded-Proto and X-Forwarded-Host
// say what it was, but anyone can send them: they are believed only from
// a configured proxy address, and dropped from everyone else's requests
// so that no API reads them. A configured public URL overrides both.

// Forwarding is how an agent's HTTP listeners find the external URL of a
// request. The zero value trusts no proxy and has no public URL.
type Forwarding struct {
	trusted []netip.Prefix
	public  string
}

// NewForwarding builds a Forwarding from the trusted proxy addresses (IP
// addresses or CIDR prefixes) and the public URL ("" for none; else an
// absolute http or https URL, whose path, if any, prefixes every link).
func NewForwarding(trustedProxies []string, publicURL string) (*Forwarding, error) {
	f := &Forwarding{}
	for _, s := range trustedProxies {
		p, err := parsePrefix(s)
		if err != nil {
			return nil, err
		}
		f.trusted = append(f.trusted, p)
	}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("public_url %q: want an absolute http or https URL with no query", publicURL)
		}
		f.public = u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/")
	}
	return f, nil
}

// parsePrefix reads an address ("10.0.0.1") or a prefix ("10.0.0.0/8").
func parsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("trusted proxy %q: %w", s, err)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("trusted proxy %q: want an IP address or CIDR prefix", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// trusts reports whether remoteAddr (host:port, as http.Request's) is a
// trusted proxy.
func (f *Forwarding) trusts(remoteAddr string) bool {
	if f == nil || len(f.trusted) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range f.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

type externalKey struct{}

type clientKey struct{}

// Middleware puts each request's external base URL in its context
// (ExternalBase reads it) and removes X-Forwarded-Proto and
// X-Forwarded-Host from requests that did not come from a trusted proxy.
func (f *Forwarding) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trusted := f.trusts(r.RemoteAddr)
		if !trusted {
			r.Header.Del("X-Forwarded-Proto")
			r.Header.Del("X-Forwarded-Host")
		}
		ctx := context.WithValue(r.Context(), externalKey{}, f.base(r, trusted))
		if trusted {
			ctx = context.WithValue(ctx, clientKey{}, f.client(r))
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// base is the external base URL of r: the public URL, else the scheme
// and host the client used (as a trusted proxy reports them).
func (f *Forwarding) base(r *http.Request, trusted bool) string {
	if f != nil && f.public != "" {
		return f.public
	}
	scheme, host := directScheme(r), r.Host
	if trusted {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstValue(r.Header.Get("X-Forwarded-Host")); validHost(h) {
			host = h
		}
	}
	return scheme + "://" + host
}

// client is the address of the client a trusted proxy forwarded r for:
// the rightmost X-Forwarded-For address that is not a trusted proxy
// (addresses to its left were written by the client, and could be
// anything), else the proxy's own.
func (f *Forwarding) client(r *http.Request) string {
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		a, err := netip.ParseAddr(hop)
		if err != nil {
			break
		}
		if !f.trusts(net.JoinHostPort(hop, "0")) {
			return a.Unmap().String()
		}
	}
	return remoteHost(r)
}

// remoteHost is the address of the connection's peer, without its port.
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// ClientAddr is the address of the client a request came from: behind a
// trusted proxy (Middleware), the one the proxy forwarded it for; else
// the connection's peer. Rate limits and access logs key on it.
func ClientAddr(r *http.Request) string {
	if c, ok := r.Context().Value(clientKey{}).(string); ok {
		return c
	}
	return remoteHost(r)
}

// firstValue is the first of a comma-separated header's values: the one
// the outermost proxy set.
func firstValue(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.ToLower(strings.TrimSpace(v))
}

// validHost keeps a forwarded host from injecting a path or userinfo
// into links.
func validHost(h string) bool {
	return h != "" && !strings.ContainsAny(h, "/\\@?# \t")
}

// directScheme is the scheme of the connection itself.
func directScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// ExternalBase is the scheme and host (and the public URL's path, if it
// has one) the client reached this agent at, without a trailing slash:
// what Middleware found, or, for a request that did not pass through it,
// the connection's own scheme and Host header.
func ExternalBase(r *http.Request) string {
	if b, ok := r.Context().Value(externalKey{}).(string); ok {
		return b
	}
	return directScheme(r) + "://" + r.Host
}
