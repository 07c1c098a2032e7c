package diskxfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// A live migration's source asks its destination's agent to prepare
// before it sends the guest (Nova's pre_live_migration on the
// destination compute): the destination fetches the instance's image
// into its image cache and answers with the file's path there, on which
// the source builds the destination's root overlay, so that only what
// the guest wrote travels. The call carries the move's token, which the
// destination's allocation holds; it is idempotent, so a retry after a
// lost answer is harmless.

// PreparePath is the suffix of an allocation's export URL the source
// POSTs to: MountPath+A+PreparePath.
const PreparePath = "/prepare"

// ErrNoPrepare means the destination's agent predates the prepare call
// (no route serves it there): the source migrates without it, as
// before.
var ErrNoPrepare = errors.New("the destination's agent cannot prepare for a live migration")

// Prepared is what a live migration's destination made ready.
type Prepared struct {
	// ImagePath is the destination's local file of the instance's
	// image (its image cache's), "" when the instance has no image data
	// to fetch; the source then copies the whole disk.
	ImagePath string `json:"image_path,omitempty"`
}

// PrepareFunc prepares allocation allocID, a live migration's
// destination on this host, for the holder of token, or refuses with
// ErrUnknown, ErrDenied or ErrBusy (wrapped).
type PrepareFunc func(ctx context.Context, allocID, token string) (Prepared, error)

// WithPrepare makes s answer live migrations' prepare calls with fn.
func (s *Server) WithPrepare(fn PrepareFunc) *Server {
	s.mux.HandleFunc("POST "+MountPath+"{alloc}"+PreparePath, func(w http.ResponseWriter, r *http.Request) {
		token := r.Header.Get(TokenHeader)
		if token == "" {
			httpError(w, http.StatusUnauthorized, "a prepare call needs the move's token ("+TokenHeader+")")
			return
		}
		p, err := fn(r.Context(), r.PathValue("alloc"), token)
		if err != nil {
			s.refuse(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&p)
	})
	return s
}

// Prepare asks the destination dst of a live migration to prepare and
// returns what it made ready. An error means the destination is not
// ready and the migration must not start, except ErrNoPrepare.
func Prepare(ctx context.Context, hc *http.Client, dst *structs.DiskSource) (Prepared, error) {
	if dst == nil || dst.URL == "" {
		return Prepared{}, errors.New("the destination host publishes no disk export: its agent cannot prepare")
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	u := strings.TrimSuffix(dst.URL, "/") + "/" + url.PathEscape(dst.AllocID) + PreparePath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return Prepared{}, err
	}
	req.Header.Set(TokenHeader, dst.Token)
	resp, err := hc.Do(req)
	if err != nil {
		return Prepared{}, fmt.Errorf("prepare the destination: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return Prepared{}, fmt.Errorf("prepare the destination: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var body struct{ Error string }
		if json.Unmarshal(raw, &body) != nil || body.Error == "" {
			body.Error = strings.TrimSpace(string(raw))
		}
		if resp.StatusCode == http.StatusMethodNotAllowed || (resp.StatusCode == http.StatusNotFound && body.Error == msgNoExport) {
			return Prepared{}, ErrNoPrepare
		}
		return Prepared{}, fmt.Errorf("prepare the destination: it answered %s: %s", resp.Status, body.Error)
	}
	var p Prepared
	if err := json.Unmarshal(raw, &p); err != nil {
		return Prepared{}, fmt.Errorf("prepare the destination: %w", err)
	}
	return p, nil
}
