package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratus-cloud/stratus/internal/route"
)

// TestAPIRequestMetrics: every API's requests are counted by API, route
// template and status, a request no route took as "unmatched" (never
// its raw path), and rate-limited requests by interface.
func TestAPIRequestMetrics(t *testing.T) {
	t.Parallel()
	rate, burst := 1.0, 40
	a := testAgent(t, func(c *Config) { c.Limits = &LimitsConfig{HTTPRate: &rate, HTTPBurst: &burst} })
	tok := keystoneToken(t, a, "admin")
	get := func(path string) int {
		req, err := http.NewRequest(http.MethodGet, a.url(path), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Auth-Token", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/compute/v2.1/flavors/1"); code != http.StatusOK {
		t.Fatalf("GET flavor: %d", code)
	}
	get("/compute/v2.1/no-such-thing/0b9a3c")
	get("/image/v2/images")
	for get("/network/v2.0/networks") != http.StatusTooManyRequests {
	}
	_, _, body := do(t, "GET", a.url("/v1/metrics"), nil)
	text := string(body)
	for _, want := range []string{
		`stratus_api_requests_total{api="compute",code="200",route="GET /flavors/{id}"}`,
		`stratus_api_requests_total{api="compute",code="404",route="unmatched"}`,
		`stratus_api_requests_total{api="image",code="200",route="GET /v2/images"}`,
		`stratus_api_requests_total{api="identity",code="201",route="POST /v3/auth/tokens"}`,
		`stratus_api_request_duration_seconds_count{api="network",route="GET /v2.0/networks"}`,
		`stratus_http_rate_limited_total{interface="network"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if regexp.MustCompile(`route="[^"]*0b9a3c`).MatchString(text) {
		t.Error("a raw path became a route label")
	}
}

// TestRaftAndGossipMetrics: Raft's and memberlist's own metrics (through
// go-metrics) are served at /v1/metrics beside the agent's.
func TestRaftAndGossipMetrics(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	waitFor(t, "raft and memberlist metrics", func() error {
		_, _, body := do(t, "GET", a.url("/v1/metrics"), nil)
		text := string(body)
		for _, prefix := range []string{"stratus_raft_apply", "stratus_raft_commitTime", "stratus_memberlist_", "stratus_raft_leader "} {
			if !strings.Contains(text, prefix) {
				return fmt.Errorf("no %s metric yet", prefix)
			}
		}
		return nil
	})
}

// TestGoMetricsDoNotCollide: the agent's registry and go-metrics' gather
// together without a clash of names.
func TestGoMetricsDoNotCollide(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	g, err := goMetricsGatherer()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "raft metrics", func() error {
		if _, _, body := do(t, "GET", a.url("/v1/metrics"), nil); !strings.Contains(string(body), "stratus_raft_apply") {
			return fmt.Errorf("no raft metrics yet")
		}
		return nil
	})
	if _, err := (prometheus.Gatherers{a.metrics.registry, g}).Gather(); err != nil {
		t.Fatalf("gathering the agent's and go-metrics' figures: %v", err)
	}
}

// TestStateMetrics: a server's metrics count hosts by status, the
// cluster's capacity and use per resource class, and the scheduling
// queues.
func TestStateMetrics(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	waitFor(t, "state metrics", func() error {
		_, _, body := do(t, "GET", a.url("/v1/metrics"), nil)
		text := string(body)
		for _, want := range []string{
			`stratus_hosts{enabled="true",status="up"} 1`,
			`stratus_capacity{class="VCPU",kind="total"}`,
			`stratus_capacity{class="MEMORY_MB",kind="used"}`,
			`stratus_scheduler_queue{queue="evals_ready"}`,
		} {
			if !strings.Contains(text, want) {
				return fmt.Errorf("metrics lack %s", want)
			}
		}
		return nil
	})
}

// TestGrafanaDashboardMetricsExist: every stratus_* metric the Grafana
// dashboard in website/grafana queries is one an agent serves, so the
// dashboard stays true.
func TestGrafanaDashboardMetricsExist(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "website", "grafana", "stratus-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	want := map[string]string{}
	nameRE := regexp.MustCompile(`stratus_[a-zA-Z_]+`)
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, name := range nameRE.FindAllString(tg.Expr, -1) {
				want[strings.TrimSuffix(name, "_bucket")] = p.Title
			}
		}
	}
	if len(want) < 10 {
		t.Fatalf("the dashboard queries only %d metrics", len(want))
	}
	rate, burst := 1.0, 40
	a := testAgent(t, func(c *Config) { c.Limits = &LimitsConfig{HTTPRate: &rate, HTTPBurst: &burst} })
	if code, _, body := do(t, "POST", a.url("/v1/instances"), strings.NewReader(`{"Name":"dash","Image":"cirros","Flavor":"m1.tiny","Count":1}`)); code != http.StatusOK && code != http.StatusAccepted {
		t.Fatalf("boot: %d %s", code, body)
	}
	for { // some traffic, up to a rate-limited request
		if code, _, _ := do(t, "GET", a.url("/compute/v2.1/"), nil); code == http.StatusTooManyRequests {
			break
		}
	}
	waitFor(t, "every metric the dashboard queries", func() error {
		_, _, body := do(t, "GET", a.url("/v1/metrics"), nil)
		for name, panel := range want {
			if !regexp.MustCompile(`(?m)^` + name + `(_bucket|_count|_sum)?[ {]`).Match(body) {
				return fmt.Errorf("panel %q queries %s, which the agent does not serve", panel, name)
			}
		}
		return nil
	})
}

// TestAccessLog: with access_log = "info" every API request is logged
// with its route template, status, request ID and the user and project
// it authenticated as.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	var buf syncBuf
	// The middleware alone, on an agent value of its own: no agent runs
	// whose logger a test could race with.
	a := &Agent{config: &Config{AccessLog: "info"}, logger: hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})}
	a.metrics = newMetrics(a)
	h := a.observed("compute", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route.ObserveCaller(r.Context(), "u-1", "p-2")
		w.Header().Set("X-Openstack-Request-Id", "req-42")
		w.WriteHeader(http.StatusAccepted)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/compute/v2.1/servers/abc/action", nil))
	line := buf.String()
	for _, want := range []string{"http: request", "api=compute", "method=POST", "route=unmatched", "status=202", "request_id=req-42", "user=u-1", "project=p-2"} {
		if !strings.Contains(line, want) {
			t.Errorf("access log %q lacks %q", line, want)
		}
	}
	if cfg := (&Config{AccessLog: "loud", DataDir: t.TempDir(), DevMode: true}); cfg.Finalize() == nil {
		t.Error("access_log = loud was accepted")
	}
	buf.reset()
	a.config.AccessLog = "off"
	a.observed("compute", http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
	if buf.String() != "" {
		t.Errorf("access_log = off logged %q", buf.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuf) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
