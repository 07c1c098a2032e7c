package diskxfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/virt"
)

// TokenHeader carries the move's token on every request.
const TokenHeader = "X-Stratus-Disk-Token"

// msgNoExport is the answer to a path no route serves; agents older than
// the prepare call answer it to one.
const msgNoExport = "no such disk export"

// MountPath is where an agent serves its disk exports: the manifest of
// allocation A at MountPath+A, a disk at MountPath+A+"/"+role.
const MountPath = "/v1/client/disks/"

// Errors a Lookup returns to say why it refused.
var (
	// ErrUnknown means no allocation of that id is exported here.
	ErrUnknown = errors.New("no disks of that allocation are exported here")
	// ErrDenied means the token does not open the allocation's disks.
	ErrDenied = errors.New("the token does not open these disks")
	// ErrBusy means the disks cannot be read now (the instance runs).
	ErrBusy = errors.New("the disks cannot be read now")
)

// Lookup returns the disks of allocation allocID to the holder of token,
// or ErrUnknown, ErrDenied or ErrBusy (wrapped) when it refuses.
type Lookup func(ctx context.Context, allocID, token string) ([]virt.ExportedDisk, error)

// Manifest lists an allocation's disks.
type Manifest struct {
	Disks []Disk `json:"disks"`
}

// Disk is one disk of a manifest.
type Disk struct {
	Role           string `json:"role"`
	Format         string `json:"format"`
	BackingImageID string `json:"backing_image_id,omitempty"`
	Size           int64  `json:"size"`
	SHA256         string `json:"sha256"`
	// File is the disk's file name in the source's pool when that pool
	// may be shared (virt.ExportedDisk.File): a destination that sees
	// it in its own pool, with this size and digest, copies it there.
	File string `json:"file,omitempty"`
}

// Server serves the disk exports of one agent.
type Server struct {
	lookup Lookup
	logger hclog.Logger
	mux    *http.ServeMux

	mu sync.Mutex
	// sums caches digests by token and role: a token is one move, whose
	// powered-off disks do not change while it lasts.
	sums map[string]digest
}

type digest struct {
	size int64
	sum  string
}

// NewServer serves the disks lookup finds.
func NewServer(lookup Lookup, logger hclog.Logger) *Server {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &Server{lookup: lookup, logger: logger, mux: http.NewServeMux(), sums: map[string]digest{}}
	s.mux.HandleFunc("GET "+MountPath+"{alloc}", s.manifest)
	s.mux.HandleFunc("GET "+MountPath+"{alloc}/{role}", s.disk)
	s.mux.HandleFunc(MountPath, func(w http.ResponseWriter, r *http.Request) {
		httpError(w, http.StatusNotFound, msgNoExport)
	})
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) disks(w http.ResponseWriter, r *http.Request) ([]virt.ExportedDisk, bool) {
	token := r.Header.Get(TokenHeader)
	if token == "" {
		httpError(w, http.StatusUnauthorized, "a disk export needs the move's token ("+TokenHeader+")")
		return nil, false
	}
	disks, err := s.lookup(r.Context(), r.PathValue("alloc"), token)
	if err != nil {
		s.refuse(w, r, err)
		return nil, false
	}
	return disks, true
}

// refuse answers a Lookup's or PrepareFunc's error.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrUnknown):
		httpError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrDenied):
		httpError(w, http.StatusForbidden, err.Error())
	case errors.Is(err, ErrBusy), errors.Is(err, virt.ErrInvalidState):
		httpError(w, http.StatusConflict, err.Error())
	default:
		s.logger.Warn("cannot serve a disk export's request", "alloc_id", r.PathValue("alloc"), "path", r.URL.Path, "error", err)
		httpError(w, http.StatusInternalServerError, err.Error())
	}
}

func (s *Server) manifest(w http.ResponseWriter, r *http.Request) {
	disks, ok := s.disks(w, r)
	if !ok {
		return
	}
	token := r.Header.Get(TokenHeader)
	var m Manifest
	for _, d := range disks {
		dg, err := s.digest(token, d)
		if err != nil {
			httpError(w, http.StatusInternalServerError, fmt.Sprintf("read the %s disk: %v", d.Role, err))
			return
		}
		m.Disks = append(m.Disks, Disk{Role: d.Role, Format: d.Format, BackingImageID: d.BackingImageID, Size: dg.size, SHA256: dg.sum, File: d.File})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&m)
}

// digest returns a disk's size and SHA-256, reading it once per move.
func (s *Server) digest(token string, d virt.ExportedDisk) (digest, error) {
	key := token + "\x00" + d.Role
	s.mu.Lock()
	dg, ok := s.sums[key]
	s.mu.Unlock()
	if ok {
		return dg, nil
	}
	f, err := d.Open()
	if err != nil {
		return digest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return digest{}, err
	}
	dg = digest{size: n, sum: hex.EncodeToString(h.Sum(nil))}
	s.mu.Lock()
	if len(s.sums) > 1024 { // bounded: old moves' entries are not needed again
		clear(s.sums)
	}
	s.sums[key] = dg
	s.mu.Unlock()
	return dg, nil
}

func (s *Server) disk(w http.ResponseWriter, r *http.Request) {
	disks, ok := s.disks(w, r)
	if !ok {
		return
	}
	role := r.PathValue("role")
	for _, d := range disks {
		if d.Role != role {
			continue
		}
		f, err := d.Open()
		if err != nil {
			httpError(w, http.StatusInternalServerError, fmt.Sprintf("open the %s disk: %v", role, err))
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		// ServeContent answers range requests, which is how a fetch
		// resumes.
		http.ServeContent(w, r, "", time.Time{}, f)
		return
	}
	httpError(w, http.StatusNotFound, fmt.Sprintf("the allocation has no %s disk", role))
}

// httpError answers with a JSON error body.
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
