package ui

import (
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandlerServesTheApp(t *testing.T) {
	h := Handler()
	rec := get(t, h, "GET", "/ui", nil)
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/ui/" {
		t.Fatalf("/ui: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	rec = get(t, h, "GET", "/ui/", nil)
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") ||
		!strings.Contains(rec.Body.String(), `<script type="module" src="js/app.js">`) {
		t.Fatalf("/ui/: %d %q\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff")
	}
	types := map[string]string{
		"/ui/js/app.js":         "javascript",
		"/ui/css/app.css":       "text/css",
		"/ui/favicon.svg":       "image/svg+xml",
		"/ui/js/pages/hosts.js": "javascript",
	}
	for p, want := range types {
		rec := get(t, h, "GET", p, nil)
		if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), want) {
			t.Errorf("%s: %d %q, want %s", p, rec.Code, rec.Header().Get("Content-Type"), want)
		}
	}
	// Revalidation: the ETag answers 304.
	rec = get(t, h, "GET", "/ui/js/app.js", nil)
	etag := rec.Header().Get("ETag")
	if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("etag %q cache-control %q", etag, rec.Header().Get("Cache-Control"))
	}
	if rec := get(t, h, "GET", "/ui/js/app.js", map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", rec.Code)
	}
	if rec := get(t, h, "HEAD", "/ui/css/app.css", nil); rec.Code != 200 || rec.Body.Len() != 0 {
		t.Fatalf("HEAD: %d %d bytes", rec.Code, rec.Body.Len())
	}
	for _, p := range []string{"/ui/nothing.js", "/ui/js/", "/ui/../agent.go", "/uix"} {
		if rec := get(t, h, "GET", p, nil); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, rec.Code)
		}
	}
	if rec := get(t, h, "POST", "/ui/", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

var importRe = regexp.MustCompile(`(?m)^\s*import\s+(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]`)

// TestAssetsAreSelfContained checks that every module import resolves to
// an embedded file, and that nothing is fetched from another origin:
// the UI must work without the internet.
func TestAssetsAreSelfContained(t *testing.T) {
	assets := Assets()
	seen := 0
	err := fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		seen++
		b, err := fs.ReadFile(assets, p)
		if err != nil {
			return err
		}
		src := string(b)
		if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).MatchString(src) ||
			regexp.MustCompile(`(?i)@import|url\(\s*["']?(https?:)?//`).MatchString(src) {
			t.Errorf("%s refers to another origin", p)
		}
		if strings.HasSuffix(p, ".js") {
			if strings.Contains(src, "innerHTML") || strings.Contains(src, "eval(") || strings.Contains(src, "document.write") {
				t.Errorf("%s uses innerHTML, eval or document.write", p)
			}
			for _, m := range importRe.FindAllStringSubmatch(src, -1) {
				spec := m[1]
				if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
					t.Errorf("%s imports %q: only relative imports of embedded modules", p, spec)
					continue
				}
				target := path.Join(path.Dir(p), spec)
				if _, err := fs.Stat(assets, target); err != nil {
					t.Errorf("%s imports %q, which is not embedded (%s)", p, spec, target)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Fatalf("only %d assets embedded", seen)
	}
}

// noVNC's own page is served unmodified, its inline script and style
// allowed by hash and nothing else inline.
func TestNoVNCPageIsAllowedItsInlineCodeOnly(t *testing.T) {
	h := Handler()
	rec := get(t, h, "GET", "/ui/vendor/novnc/vnc_lite.html", nil)
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "<title>noVNC</title>") || !strings.Contains(body, "import RFB from './core/rfb.js';") {
		t.Fatalf("vnc_lite.html: %d\n%s", rec.Code, body)
	}
	csp := rec.Header().Get("Content-Security-Policy")
	script := inlineScript.FindStringSubmatch(body)[1]
	sum := sha256.Sum256([]byte(script))
	if want := "script-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"; !strings.Contains(csp, want) {
		t.Fatalf("CSP %q lacks %q", csp, want)
	}
	if !strings.Contains(csp, "style-src 'self' 'sha256-") || strings.Contains(csp, "unsafe-inline") || strings.Count(csp, "sha256-") != 2 {
		t.Fatalf("CSP %q", csp)
	}
	if _, err := fs.Stat(Assets(), "vendor/novnc/core/rfb.js"); err != nil {
		t.Fatalf("the page's module: %v", err)
	}
	if csp := get(t, h, "GET", "/ui/console.html", nil).Header().Get("Content-Security-Policy"); csp != contentSecurityPolicy {
		t.Fatalf("the UI's own page got %q", csp)
	}
}
