package native

import (
	"io"
	"net/http"
	"strconv"

	"github.com/stratus-cloud/stratus/structs"
)

// The native API's images: records as the servers keep them, and their
// data streamed to and from the servers' image stores. The native API
// is the operator's: it sees and changes every image.

func (a *API) imageList(w http.ResponseWriter, q *request) (any, error) {
	var args structs.ImageListRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.ImageListResponse
	if err := q.rpc.RPC("Image.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Images == nil {
		out.Images = []*structs.Image{}
	}
	return out.Images, nil
}

// findImage reads an image by id, or by name when exactly one image has
// it.
func (a *API) findImage(w http.ResponseWriter, q *request) (*structs.Image, error) {
	ref := q.param("id")
	args := structs.ImageSpecificRequest{ImageID: ref}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleImageResponse
	err := q.rpc.RPC("Image.Get", &args, &out)
	if err == nil {
		setMeta(w, &out.QueryMeta)
		return out.Image, nil
	}
	if structs.KindOf(err) != structs.KindNotFound {
		return nil, err
	}
	var list structs.ImageListResponse
	if err := q.rpc.RPC("Image.List", &structs.ImageListRequest{QueryOptions: args.QueryOptions}, &list); err != nil {
		return nil, err
	}
	var found []*structs.Image
	for _, img := range list.Images {
		if img.Name == ref {
			found = append(found, img)
		}
	}
	switch len(found) {
	case 0:
		return nil, structs.Errorf(structs.KindNotFound, "image %q not found", ref)
	case 1:
		setMeta(w, &list.QueryMeta)
		return found[0], nil
	}
	return nil, structs.Errorf(structs.KindInvalid, "%d images are named %q; use an id", len(found), ref)
}

func (a *API) imageGet(w http.ResponseWriter, q *request) (any, error) {
	return a.findImage(w, q)
}

func (a *API) imageCreate(w http.ResponseWriter, q *request) (any, error) {
	var img structs.Image
	if err := decodeJSON(w, q, &img); err != nil {
		return nil, err
	}
	args := structs.ImageCreateRequest{Image: &img}
	var out structs.SingleImageResponse
	if err := q.rpc.RPC("Image.Create", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.Image, nil
}

func (a *API) imageDelete(w http.ResponseWriter, q *request) (any, error) {
	img, err := a.findImage(w, q)
	if err != nil {
		return nil, err
	}
	args := structs.ImageDeleteRequest{ImageID: img.ID}
	var out structs.GenericResponse
	if err := q.rpc.RPC("Image.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

// imageUpload streams the body into the image's data and answers the
// image, now active.
func (a *API) imageUpload(w http.ResponseWriter, q *request) (any, error) {
	img, err := a.findImage(w, q)
	if err != nil {
		return nil, err
	}
	return a.cfg.Images.Upload(q.token, img.ID, q.ContentLength, q.Body)
}

// imageDownload streams the image's data, with its checksums in
// headers.
func (a *API) imageDownload(w http.ResponseWriter, q *request) (any, error) {
	img, err := a.findImage(w, q)
	if err != nil {
		return nil, err
	}
	if !img.HasData() {
		return nil, structs.Errorf(structs.KindNotFound, "image %s has no data", img.ID)
	}
	rc, err := a.cfg.Images.Download(q.token, img, 0, -1)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(img.Size, 10))
	h.Set("Content-MD5", img.Checksum)
	h.Set("X-Stratus-Image-Sha512", img.HashValue)
	w.WriteHeader(http.StatusOK)
	// A copy cut short leaves the body under its Content-Length, so
	// net/http closes the connection and the client sees it.
	if n, err := io.CopyBuffer(w, rc, make([]byte, 1<<20)); err != nil || n != img.Size {
		a.logger.Warn("image download interrupted", "image", img.ID, "bytes", n, "error", err)
	}
	return nil, nil
}
