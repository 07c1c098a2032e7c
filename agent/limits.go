package agent

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/ratelimit"
)

// Defaults of the limits block.
const (
	// DefaultHTTPRate is the sustained requests a second one credential
	// (or one anonymous client address) may make.
	DefaultHTTPRate = 100.0
	// DefaultHTTPBurst is how many requests it may make at once.
	DefaultHTTPBurst = 500
	// DefaultMaxHeaderBytes bounds request headers: four times eventlet's
	// max_header_line (16 KiB), which Nova and Keystone run behind.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxBodyBytes bounds the JSON bodies of the OpenStack APIs
	// (Compute, Networking, Identity, the Image API's metadata, S3's XML
	// requests): oslo.middleware's max_request_body_size.
	DefaultMaxBodyBytes = 114688
	// DefaultNativeMaxBodyBytes bounds the native /v1 API's bodies.
	DefaultNativeMaxBodyBytes = 1 << 20
	// DefaultReadHeaderTimeout cuts off a client that dribbles headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyReadTimeout cuts off a client that stops sending a
	// body: no byte for this long (an idle timeout, so large streamed
	// uploads are not bounded in total).
	DefaultBodyReadTimeout = 60 * time.Second
	// DefaultIdleTimeout closes keep-alive connections idle this long.
	DefaultIdleTimeout = 120 * time.Second
)

// LimitsConfig is the agent's limits block: request limits of every HTTP
// listener (the API port and the dedicated S3 listener). Unset fields
// keep the defaults above.
type LimitsConfig struct {
	// HTTPRate is the requests a second each credential (X-Auth-Token,
	// X-Stratus-Token, a bearer token, an S3 access key) or, without
	// one, each client address may make; 0 turns rate limiting off.
	HTTPRate *float64 `hcl:"http_rate,optional"`
	// HTTPBurst is how many requests such a client may make at once.
	HTTPBurst *int `hcl:"http_burst,optional"`
	// HTTPMaxHeaderBytes bounds the request line and headers.
	HTTPMaxHeaderBytes *int `hcl:"http_max_header_bytes,optional"`
	// HTTPMaxBodyBytes bounds request bodies of the OpenStack-compatible
	// APIs; image data and S3 objects are streamed and not bounded.
	HTTPMaxBodyBytes *int64 `hcl:"http_max_body_bytes,optional"`
	// HTTPNativeMaxBodyBytes bounds request bodies of the native /v1 API
	// (image data and snapshot restores excepted).
	HTTPNativeMaxBodyBytes *int64 `hcl:"http_native_max_body_bytes,optional"`
	// HTTPReadHeaderTimeout, HTTPBodyReadTimeout and HTTPIdleTimeout are
	// durations such as "10s" (see the defaults above).
	HTTPReadHeaderTimeout string `hcl:"http_read_header_timeout,optional"`
	HTTPBodyReadTimeout   string `hcl:"http_body_read_timeout,optional"`
	HTTPIdleTimeout       string `hcl:"http_idle_timeout,optional"`
}

// httpLimits is the finalized limits block.
type httpLimits struct {
	rate, burst          float64
	maxHeaderBytes       int
	maxBody, maxNative   int64
	readHeader, bodyRead time.Duration
	idle                 time.Duration
	limiter              *ratelimit.Limiter
	logger               hclog.Logger
	// onLimited, when set, counts a request the rate limit refused.
	onLimited func(apiInterface)
}

// finalizeLimits applies the limits block's defaults and checks it.
func (c *Config) finalizeLimits() error {
	if c.Limits == nil {
		c.Limits = &LimitsConfig{}
	}
	_, err := c.Limits.resolve()
	return err
}

// resolve checks the block and returns its values over the defaults.
func (l *LimitsConfig) resolve() (*httpLimits, error) {
	out := &httpLimits{rate: DefaultHTTPRate, burst: DefaultHTTPBurst, maxHeaderBytes: DefaultMaxHeaderBytes,
		maxBody: DefaultMaxBodyBytes, maxNative: DefaultNativeMaxBodyBytes, readHeader: DefaultReadHeaderTimeout,
		bodyRead: DefaultBodyReadTimeout, idle: DefaultIdleTimeout}
	if l == nil {
		return out, nil
	}
	if l.HTTPRate != nil {
		if *l.HTTPRate < 0 {
			return nil, fmt.Errorf("limits: http_rate %v must not be negative (0 turns rate limiting off)", *l.HTTPRate)
		}
		out.rate = *l.HTTPRate
	}
	if l.HTTPBurst != nil {
		if *l.HTTPBurst < 1 {
			return nil, fmt.Errorf("limits: http_burst %d must be at least 1", *l.HTTPBurst)
		}
		out.burst = float64(*l.HTTPBurst)
	}
	if l.HTTPMaxHeaderBytes != nil {
		if *l.HTTPMaxHeaderBytes < 1024 {
			return nil, fmt.Errorf("limits: http_max_header_bytes %d must be at least 1024", *l.HTTPMaxHeaderBytes)
		}
		out.maxHeaderBytes = *l.HTTPMaxHeaderBytes
	}
	for name, v := range map[string]struct {
		src *int64
		dst *int64
	}{"http_max_body_bytes": {l.HTTPMaxBodyBytes, &out.maxBody}, "http_native_max_body_bytes": {l.HTTPNativeMaxBodyBytes, &out.maxNative}} {
		if v.src == nil {
			continue
		}
		if *v.src < 1024 {
			return nil, fmt.Errorf("limits: %s %d must be at least 1024", name, *v.src)
		}
		*v.dst = *v.src
	}
	for _, d := range []struct {
		name, v string
		dst     *time.Duration
	}{{"http_read_header_timeout", l.HTTPReadHeaderTimeout, &out.readHeader},
		{"http_body_read_timeout", l.HTTPBodyReadTimeout, &out.bodyRead},
		{"http_idle_timeout", l.HTTPIdleTimeout, &out.idle}} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("limits: %s %q is not a positive duration such as 30s", d.name, d.v)
		}
		*d.dst = v
	}
	return out, nil
}

// newHTTPLimits builds the agent's limits from its finalized config; the
// API port and the S3 listener share its rate limiter.
func newHTTPLimits(cfg *Config, logger hclog.Logger) (*httpLimits, error) {
	l, err := cfg.Limits.resolve()
	if err != nil {
		return nil, err
	}
	if l.rate > 0 {
		l.limiter = ratelimit.New(ratelimit.Config{Rate: l.rate, Burst: int(l.burst)})
	}
	l.logger = logger
	return l, nil
}

// newHTTPServer is an http.Server for handler with the limits: header
// size, a header timeout against slow clients and an idle timeout for
// kept-alive connections. There is deliberately no ReadTimeout or
// WriteTimeout: both bound a whole request, and image uploads and
// downloads, snapshots, console websockets and blocking queries last
// long; bodies get an idle read timeout from the middleware instead.
// iface is the interface every request is answered as when the handler
// serves one alone (the S3 listener), "" to pick by path.
func (l *httpLimits) newHTTPServer(handler http.Handler, iface apiInterface, logger hclog.Logger) *http.Server {
	return &http.Server{
		Handler:           l.middleware(handler, iface),
		MaxHeaderBytes:    l.maxHeaderBytes,
		ReadHeaderTimeout: l.readHeader,
		IdleTimeout:       l.idle,
		ErrorLog:          logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
}

// httpLimits returns the agent's limits, built on first use (New, before
// any listener serves).
func (a *Agent) httpLimits() *httpLimits {
	if a.limits == nil {
		l, err := newHTTPLimits(a.config, a.logger)
		if err != nil {
			// Config.Finalize checks the block; an unfinalized config
			// falls back to the defaults.
			a.logger.Warn("invalid limits block, using the defaults", "error", err)
			l, _ = newHTTPLimits(&Config{}, a.logger)
		}
		l.onLimited = func(iface apiInterface) {
			if m := a.metrics; m != nil {
				name := string(iface)
				if name == "" {
					name = "other"
				}
				m.rateLimited.WithLabelValues(name).Inc()
			}
		}
		a.limits = l
	}
	return a.limits
}
