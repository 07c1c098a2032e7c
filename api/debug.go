package api

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ForAgent returns a client of the agent at address (host:port, or a
// URL) with this client's scheme, TLS settings and token: how an
// operator's tool reaches every server of a cluster it found through one
// agent (Agent.Members's HTTPAddr).
func (c *Client) ForAgent(address string) (*Client, error) {
	token, err := c.ensureToken()
	if err != nil {
		return nil, err
	}
	if !strings.Contains(address, "://") {
		u, err := url.Parse(c.base)
		if err != nil {
			return nil, err
		}
		address = u.Scheme + "://" + address
	}
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid agent address %q", address)
	}
	return &Client{base: u.Scheme + "://" + u.Host, http: c.http, token: token}, nil
}

// Metrics streams the agent's Prometheus metrics (/v1/metrics), in the
// text exposition format. The caller closes it.
func (a *Agent) Metrics() (io.ReadCloser, error) {
	resp, err := a.c.do(&request{method: http.MethodGet, path: "/v1/metrics"})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Pprof streams one of the Go profiler's profiles of the agent
// (/v1/agent/pprof/NAME: "goroutine", "heap", "profile" for CPU, "trace",
// …), which it serves to admins only with enable_debug. seconds, when
// positive, is how long a "profile" or "trace" samples. The caller closes
// it.
func (a *Agent) Pprof(name string, seconds time.Duration) (io.ReadCloser, error) {
	params := url.Values{}
	if s := int(seconds / time.Second); s > 0 {
		params.Set("seconds", strconv.Itoa(s))
	}
	resp, err := a.c.do(&request{method: http.MethodGet, path: "/v1/agent/pprof/" + url.PathEscape(name), params: params})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Logs streams the agent's recent log lines (/v1/agent/logs), oldest
// first, from the buffer `cloudctl agent` keeps. The caller closes it.
func (a *Agent) Logs() (io.ReadCloser, error) {
	resp, err := a.c.do(&request{method: http.MethodGet, path: "/v1/agent/logs"})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
