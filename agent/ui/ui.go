package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"
)

// MountPath is where the agent serves the UI.
const MountPath = "/ui"

//go:embed assets
var embedded embed.FS

// contentSecurityPolicy allows the UI's own scripts, styles, images and
// API calls, and nothing else: no inline script, no third-party origin,
// no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
	// csp is the file's Content-Security-Policy.
	csp string
}

// inlineScript and inlineStyle find a page's inline script and style
// elements (a script with a src is not inline).
var (
	inlineScript = regexp.MustCompile(`(?s)<script(?:\s+(?:type|crossorigin)="[^"]*")*\s*>(.*?)</script>`)
	inlineStyle  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
)

// pageCSP is a file's policy: contentSecurityPolicy, with the hashes of
// an HTML page's inline scripts and styles allowed by name. Only the
// vendored noVNC page (vnc_lite.html, kept unmodified) has any; the UI's
// own pages have none and get the policy as it is.
func pageCSP(p string, body []byte) string {
	if path.Ext(p) != ".html" {
		return contentSecurityPolicy
	}
	hashes := func(re *regexp.Regexp) string {
		out := ""
		for _, m := range re.FindAllSubmatch(body, -1) {
			sum := sha256.Sum256(m[1])
			out += " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		}
		return out
	}
	csp := contentSecurityPolicy
	if h := hashes(inlineScript); h != "" {
		csp = strings.Replace(csp, "script-src 'self'", "script-src 'self'"+h, 1)
	}
	if h := hashes(inlineStyle); h != "" {
		csp = strings.Replace(csp, "style-src 'self'", "style-src 'self'"+h, 1)
	}
	return csp
}

// Assets returns the embedded files, rooted at the UI's top directory
// (index.html, js/…, css/…), for tests and tools.
func Assets() fs.FS {
	sub, err := fs.Sub(embedded, "assets")
	if err != nil {
		panic("ui: embedded assets missing: " + err.Error())
	}
	return sub
}

// Handler serves the UI under MountPath: /ui redirects to /ui/, which is
// index.html; every other path is an embedded file or a 404. Responses
// carry a strict Content-Security-Policy and an ETag, and are revalidated
// on every load so an upgraded agent never serves a stale UI.
func Handler() http.Handler {
	files := map[string]*asset{}
	err := fs.WalkDir(Assets(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(Assets(), p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ctype := mime.TypeByExtension(path.Ext(p))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		files["/"+p] = &asset{body: body, contentType: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, csp: pageCSP(p, body)}
		return nil
	})
	if err != nil {
		panic("ui: read embedded assets: " + err.Error())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rel, ok := strings.CutPrefix(r.URL.Path, MountPath)
		if !ok {
			http.NotFound(w, r)
			return
		}
		if rel == "" {
			http.Redirect(w, r, MountPath+"/", http.StatusMovedPermanently)
			return
		}
		if rel == "/" {
			rel = "/index.html"
		}
		a := files[rel]
		if a == nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Content-Security-Policy", a.csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(a.body)
	})
}
