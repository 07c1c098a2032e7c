package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Environment variables read by DefaultConfig.
const (
	// EnvAddress names the variable holding the agent's HTTP address.
	EnvAddress = "CLOUDCTL_ADDR"
	// EnvToken names the variable holding the ACL token.
	EnvToken = "CLOUDCTL_TOKEN"
	// DefaultAddress is used when EnvAddress is unset or empty.
	DefaultAddress = "http://127.0.0.1:8774"
)

// HTTP headers of the native API.
const (
	// HeaderToken carries Config.Token on every request.
	HeaderToken = "X-Stratus-Token"
	// HeaderIndex carries the state index of a read or the Raft index of a write.
	HeaderIndex = "X-Stratus-Index"
	// HeaderKnownLeader is "true" when the answering server knew a leader.
	HeaderKnownLeader = "X-Stratus-KnownLeader"
	// HeaderLastContact is the time since the answering server heard from
	// the leader, in milliseconds.
	HeaderLastContact = "X-Stratus-LastContact"
)

// Config configures a Client.
type Config struct {
	// Address is the agent's HTTP API URL, such as http://127.0.0.1:8774.
	// A path prefix (for an agent behind a proxy) is kept.
	Address string
	// HTTPClient sends the requests; nil means a client without an overall
	// timeout, so that blocking queries and snapshots are not cut short.
	HTTPClient *http.Client
	// Token is sent as the X-Stratus-Token header when not empty.
	Token string
	// Credentials, when Token is empty, log the client in on its first
	// request.
	Credentials *Credentials
	// TLS checks an HTTPS agent and presents a client certificate, when
	// HTTPClient is nil; nil means the system's roots and no certificate.
	TLS *TLSConfig
}

// DefaultConfig returns a Config whose Address comes from $CLOUDCTL_ADDR
// (else DefaultAddress) and whose credentials come from DefaultToken.
func DefaultConfig() *Config {
	c := &Config{Address: DefaultAddress}
	if addr := os.Getenv(EnvAddress); addr != "" {
		c.Address = addr
	}
	c.Token, c.Credentials = DefaultToken(c.Address)
	c.TLS = tlsFromEnv()
	return c
}

// DefaultToken finds the credential for the agent at address, first of:
// $CLOUDCTL_TOKEN, $OS_TOKEN, the token `cloudctl login` saved for that
// address; without any, the OS_USERNAME/OS_PASSWORD credentials (an
// openrc) that log the client in on its first request.
func DefaultToken(address string) (string, *Credentials) {
	for _, v := range []string{os.Getenv(EnvToken), os.Getenv(EnvOSToken)} {
		if v != "" {
			return v, nil
		}
	}
	if t := LoadToken(address); t != nil {
		return t.Token, nil
	}
	return "", credentialsFromEnv()
}

// Client is a client of the native HTTP API. It is safe for concurrent use.
type Client struct {
	base string // scheme://host[/prefix], no trailing slash
	http *http.Client
	cred *Credentials

	mu    sync.Mutex
	token string
}

// NewClient returns a Client for c, or an error when c.Address is not an
// http or https URL. A nil c means DefaultConfig().
func NewClient(c *Config) (*Client, error) {
	if c == nil {
		c = DefaultConfig()
	}
	u, err := url.Parse(c.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("invalid address %q: must be an http:// or https:// URL such as %s", c.Address, DefaultAddress)
	}
	hc := c.HTTPClient
	if hc == nil {
		if hc, err = httpClientFor(c.TLS); err != nil {
			return nil, fmt.Errorf("TLS: %w", err)
		}
	}
	base := u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
	return &Client{base: base, http: hc, token: c.Token, cred: c.Credentials}, nil
}

// Address returns the base URL requests are sent to.
func (c *Client) Address() string { return c.base }

// QueryOptions tune a read.
type QueryOptions struct {
	// WaitIndex makes the read block until the state index passes it.
	WaitIndex uint64
	// WaitTime bounds how long a blocking read waits.
	WaitTime time.Duration
	// AllowStale lets any server answer from its local state.
	AllowStale bool
}

// QueryMeta describes the answer to a read.
type QueryMeta struct {
	// LastIndex is the state index the answer reflects.
	LastIndex uint64
	// KnownLeader reports whether the answering server knew a leader.
	KnownLeader bool
	// LastContact is how long ago the answering server heard from the leader.
	LastContact time.Duration
}

// WriteMeta describes a committed write.
type WriteMeta struct {
	// LastIndex is the Raft index at which the write was committed.
	LastIndex uint64
}

// request is one HTTP call. path is already escaped and starts with "/".
type request struct {
	method      string
	path        string
	params      url.Values
	query       *QueryOptions
	body        io.Reader
	contentType string
	// header holds extra request headers (an Idempotency-Key).
	header http.Header
}

// encodeQuery renders params and the blocking-query options as
// "index=N&wait=5s&stale".
func (r *request) encodeQuery() string {
	var parts []string
	if enc := r.params.Encode(); enc != "" {
		parts = append(parts, enc)
	}
	if q := r.query; q != nil {
		if q.WaitIndex != 0 {
			parts = append(parts, "index="+strconv.FormatUint(q.WaitIndex, 10))
		}
		if q.WaitTime > 0 {
			parts = append(parts, "wait="+url.QueryEscape(q.WaitTime.String()))
		}
		if q.AllowStale {
			parts = append(parts, "stale")
		}
	}
	return strings.Join(parts, "&")
}

// do sends r and returns the response of a 2xx answer; any other answer is
// consumed and returned as an *Error. The caller closes the body.
func (c *Client) do(r *request) (*http.Response, error) {
	target := c.base + r.path
	if q := r.encodeQuery(); q != "" {
		target += "?" + q
	}
	req, err := http.NewRequest(r.method, target, r.body)
	if err != nil {
		return nil, err
	}
	token, err := c.ensureToken()
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set(HeaderToken, token)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, connError(c.base, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

// doJSON sends r with in (if not nil) as its JSON body, decodes a JSON
// answer into out (if not nil) and returns the response headers.
func (c *Client) doJSON(r *request, in, out any) (http.Header, error) {
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encoding request: %w", err)
		}
		r.body, r.contentType = bytes.NewReader(buf), "application/json"
	}
	resp, err := c.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return nil, fmt.Errorf("decoding response of %s %s: %w", r.method, r.path, err)
		}
	}
	// Drain so the connection can be reused.
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Header, nil
}

// query GETs path into out and parses the read metadata.
func (c *Client) query(path string, out any, q *QueryOptions) (*QueryMeta, error) {
	h, err := c.doJSON(&request{method: http.MethodGet, path: path, query: q}, nil, out)
	if err != nil {
		return nil, err
	}
	return parseQueryMeta(h)
}

// write sends in with method to path, decodes the answer into out and
// parses the write metadata.
func (c *Client) write(method, path string, params url.Values, in, out any) (*WriteMeta, error) {
	return c.writeWith(&request{method: method, path: path, params: params}, in, out)
}

// writeWith is write of a prepared request (extra headers).
func (c *Client) writeWith(r *request, in, out any) (*WriteMeta, error) {
	h, err := c.doJSON(r, in, out)
	if err != nil {
		return nil, err
	}
	idx, err := parseIndex(h)
	if err != nil {
		return nil, err
	}
	return &WriteMeta{LastIndex: idx}, nil
}

// delete sends a DELETE to path with params and parses the write metadata.
func (c *Client) delete(path string, params url.Values) (*WriteMeta, error) {
	return c.write(http.MethodDelete, path, params, nil, nil)
}

func parseIndex(h http.Header) (uint64, error) {
	v := h.Get(HeaderIndex)
	if v == "" {
		return 0, nil
	}
	idx, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("failed to parse %s header %q: %w", HeaderIndex, v, err)
	}
	return idx, nil
}

func parseQueryMeta(h http.Header) (*QueryMeta, error) {
	idx, err := parseIndex(h)
	if err != nil {
		return nil, err
	}
	m := &QueryMeta{LastIndex: idx, KnownLeader: h.Get(HeaderKnownLeader) == "true"}
	if v := h.Get(HeaderLastContact); v != "" {
		ms, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("failed to parse %s header %q: %w", HeaderLastContact, v, err)
		}
		m.LastContact = time.Duration(ms) * time.Millisecond
	}
	return m, nil
}
