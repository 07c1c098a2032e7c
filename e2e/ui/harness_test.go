package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium, which scripts/ci-deps.sh installs.
// The tests never let chromedp or anything else download a browser.
const chromiumPath = "/usr/bin/chromium"

var (
	buildOnce   sync.Once
	cloudctlBin string
	buildErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cloudctlBin != "" {
		_ = os.RemoveAll(filepath.Dir(cloudctlBin))
	}
	os.Exit(code)
}

// repoRoot is the module's root directory.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// requireChromium finds the browser. Under CI=true a missing browser
// fails the test instead of skipping it.
func requireChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI (scripts/ci-deps.sh installs the Debian packages chromium and chromium-driver): %v", chromiumPath, err)
		}
		t.Skipf("%s not installed; run scripts/ci-deps.sh (Debian packages chromium and chromium-driver)", chromiumPath)
	}
	return chromiumPath
}

// buildCloudctl builds the binary once per test run.
func buildCloudctl(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "stratus-ui-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		bin := filepath.Join(dir, "cloudctl")
		// With the race detector: the UI drives the agent's handlers
		// concurrently, as browsers do.
		cmd := exec.Command("go", "build", "-race", "-o", bin, "./cmd/cloudctl")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build cloudctl: %v\n%s", err, out)
			return
		}
		cloudctlBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return cloudctlBin
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// startDevAgent runs `cloudctl agent --dev` on random loopback ports with
// extra config, waits for its banner and answers its HTTP base URL; the
// process is killed when the test ends.
func startDevAgent(t *testing.T, name, config string) string {
	t.Helper()
	bin := buildCloudctl(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "agent", "--dev", "--node-name", name, "--bind", "127.0.0.1",
		"--http-port", "0", "--rpc-port", "0", "--gossip-port", "0", "--data-dir", filepath.Join(dir, "data"), "--config", cfg)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		out := logs.String()
		if i := strings.Index(out, "WARNING: DATA RACE"); i >= 0 {
			t.Errorf("the race detector caught a data race in agent %s:\n%s", name, out[i:])
		} else if t.Failed() {
			t.Logf("logs of agent %s:\n%s", name, out)
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		httpAddr := ""
		for sc.Scan() {
			key, val, _ := strings.Cut(strings.TrimSpace(sc.Text()), ":")
			switch key {
			case "HTTP":
				httpAddr = strings.TrimSpace(val)
			case "Data":
				addr <- httpAddr
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok || a == "" {
			t.Fatalf("agent %s exited before its banner\n%s", name, logs.String())
		}
		if !strings.HasPrefix(a, "http") {
			a = "http://" + a
		}
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("agent %s printed no banner\n%s", name, logs.String())
	}
	return ""
}

// call sends a JSON request and decodes the answer into out (when not
// nil); it answers the status and the response headers.
func call(t *testing.T, method, url, token string, body, out any) (int, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	req.Header.Set("OpenStack-API-Version", "compute 2.96")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, url, raw, err)
		}
	}
	if resp.StatusCode >= 300 && out != nil {
		t.Logf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header
}

// token issues a project-scoped token for a dev user, whose project has
// the user's name.
func token(t *testing.T, base, user string) (string, error) {
	t.Helper()
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": user, "domain": map[string]any{"name": "Default"}, "password": user}}},
		"scope": map[string]any{"project": map[string]any{"name": user, "domain": map[string]any{"name": "Default"}}},
	}}
	code, hdr := call(t, "POST", base+"/identity/v3/auth/tokens", "", body, nil)
	if code != http.StatusCreated {
		return "", fmt.Errorf("token for %s: %d", user, code)
	}
	return hdr.Get("X-Subject-Token"), nil
}

// eventually retries fn until it returns nil or the timeout passes.
func eventually(t *testing.T, what string, timeout time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// newBrowser starts a headless Chromium with a fresh profile; tabs are
// contexts derived from the answer.
func newBrowser(t *testing.T, execPath string) context.Context {
	t.Helper()
	profile, err := os.MkdirTemp("", "stratus-ui-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	})
	// The first run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start %s: %v", execPath, err)
	}
	return browserCtx
}

// consoleMessage is one console message of a tab, with the page it came from.
type consoleMessage struct {
	tab string
	msg chromedp.ConsoleMessage
}

// consoleLog collects every tab's console messages.
type consoleLog struct {
	mu   sync.Mutex
	msgs []consoleMessage
}

func (c *consoleLog) add(tab string, m chromedp.ConsoleMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, consoleMessage{tab: tab, msg: m})
}

func (c *consoleLog) all() []consoleMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]consoleMessage(nil), c.msgs...)
}

// tab is one browser tab driven by a test.
type tab struct {
	t    *testing.T
	name string
	ctx  context.Context
	base string
	log  *consoleLog
}

// newTab opens a tab (with its own sessionStorage) and records its
// console into log.
func newTab(t *testing.T, browser context.Context, name, base string, log *consoleLog) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			log.add(name, m)
		}
	}()
	return &tab{t: t, name: name, ctx: ctx, base: base, log: log}
}

// networkChanged is the text Chromium logs for a request it aborted
// because the machine's network interfaces changed. Other tests running
// at the same time (virt/libvirt, the data plane's) create and remove
// interfaces, and Chromium then aborts whatever it was loading, even
// from 127.0.0.1.
const networkChanged = "net::ERR_NETWORK_CHANGED"

// networkChanges counts the requests of this tab Chromium aborted
// because the network changed.
func (b *tab) networkChanges() int {
	n := 0
	for _, m := range b.log.all() {
		if m.tab == b.name && strings.Contains(m.msg.Text, networkChanged) {
			n++
		}
	}
	return n
}

// open navigates to url and waits (up to timeout) until readyExpr is
// truthy. When Chromium aborted part of the page's loading because the
// machine's network changed meanwhile, it loads the page again, up to
// three times; any other failure fails the test.
func (b *tab) open(what, url, ready, readyExpr string, timeout time.Duration) {
	b.t.Helper()
	for attempt := 1; ; attempt++ {
		changes := b.networkChanges()
		b.do(what, chromedp.Navigate(url))
		err := b.tryWaitJS(readyExpr, timeout)
		if err == nil {
			return
		}
		if attempt == 3 || b.networkChanges() == changes {
			b.t.Fatalf("%s: %s: timed out after %s waiting for %s (%s; %v)\npage:\n%s", b.name, what, timeout, ready, readyExpr, err, b.pageText())
		}
		b.t.Logf("%s: %s: the network changed while the page loaded (%s); loading it again", b.name, what, networkChanged)
	}
}

// do runs actions with a timeout.
func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %s: %v\npage:\n%s", b.name, what, err, b.pageText())
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](b *tab, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// must evaluates an expression that must succeed.
func must[T any](b *tab, expr string) T {
	b.t.Helper()
	v, err := eval[T](b, expr)
	if err != nil {
		b.t.Fatalf("%s: evaluate %s: %v", b.name, expr, err)
	}
	return v
}

// pageText is the page's visible text, for failure messages.
func (b *tab) pageText() string {
	s, err := eval[string](b, `location.href + "\n" + (document.body ? document.body.innerText : "")`)
	if err != nil {
		return "(page text unavailable: " + err.Error() + ")"
	}
	return s
}

// waitJS waits until a JavaScript expression is truthy.
func (b *tab) waitJS(what, expr string, timeout time.Duration) {
	b.t.Helper()
	if err := b.tryWaitJS(expr, timeout); err != nil {
		b.t.Fatalf("%s: timed out after %s waiting for %s (%s; %v)\npage:\n%s", b.name, timeout, what, expr, err, b.pageText())
	}
}

// tryWaitJS waits until a JavaScript expression is truthy, or returns
// why it was not within timeout.
func (b *tab) tryWaitJS(expr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := eval[bool](b, "!!("+expr+")")
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("still false")
			}
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// goTo changes the UI's route without reloading the page.
func (b *tab) goTo(route string) {
	b.t.Helper()
	must[bool](b, fmt.Sprintf(`(location.hash = %q, true)`, "#"+route))
}

// screenshot saves the whole page as build/ui-screenshots/NAME.png.
func (b *tab) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	// Let transitions finish.
	time.Sleep(250 * time.Millisecond)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("%s: screenshot %s: %v", b.name, name, err)
	}
	dir := filepath.Join(repoRoot(), "build", "ui-screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// a11yProblems lists what the page gets wrong of the basics: form
// controls without a label, buttons and links without a name, duplicate
// ids, no h1 in main.
const a11yProblems = `(() => {
  const out = [];
  const hidden = (el) => !!el.closest('[hidden]');
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden' || hidden(el)) continue;
    if (!(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby')) {
      out.push('unlabelled ' + el.tagName.toLowerCase() + '#' + el.id);
    }
  }
  for (const el of document.querySelectorAll('button, a[href]')) {
    if (hidden(el)) continue;
    const name = (el.getAttribute('aria-label') || el.textContent || '').trim();
    if (!name) out.push('nameless ' + el.outerHTML.slice(0, 80));
  }
  const ids = new Set();
  for (const el of document.querySelectorAll('[id]')) {
    if (ids.has(el.id)) out.push('duplicate id ' + el.id);
    ids.add(el.id);
  }
  if (!document.querySelector('main h1')) out.push('no h1 in main');
  return out;
})()`

// checkA11y fails on the basic accessibility problems of the page.
func (b *tab) checkA11y(page string) {
	b.t.Helper()
	problems := must[[]string](b, a11yProblems)
	if len(problems) > 0 {
		b.t.Errorf("%s: accessibility problems on %s: %s", b.name, page, strings.Join(problems, "; "))
	}
}
