package agent

import (
	"io"
	"net/http"
	"strconv"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// The native API's images: records as the servers keep them, and their
// data streamed to and from the servers' image stores. The native API
// is the operator's: it sees and changes every image.

// imageRoutes are the /v1/images routes, added to the route table.
func (a *Agent) imageRoutes() []route {
	return []route{
		{"GET /v1/images", policy.Admin, a.imageList},
		{"POST /v1/images", policy.Admin, a.imageCreate},
		{"GET /v1/images/{id}", policy.Admin, a.imageGet},
		{"DELETE /v1/images/{id}", policy.Admin, a.imageDelete},
		{"PUT /v1/images/{id}/data", policy.Admin, a.imageUpload},
		{"GET /v1/images/{id}/data", policy.Admin, a.imageDownload},
	}
}

func (a *Agent) imageList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.ImageListRequest
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.ImageListResponse
	if err := a.rpc.RPC("Image.List", &args, &out); err != nil {
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
func (a *Agent) findImage(w http.ResponseWriter, r *http.Request) (*structs.Image, error) {
	ref := r.PathValue("id")
	args := structs.ImageSpecificRequest{ImageID: ref}
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleImageResponse
	err := a.rpc.RPC("Image.Get", &args, &out)
	if err == nil {
		setMeta(w, &out.QueryMeta)
		return out.Image, nil
	}
	if structs.KindOf(err) != structs.KindNotFound {
		return nil, err
	}
	var list structs.ImageListResponse
	if err := a.rpc.RPC("Image.List", &structs.ImageListRequest{QueryOptions: args.QueryOptions}, &list); err != nil {
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

func (a *Agent) imageGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return a.findImage(w, r)
}

func (a *Agent) imageCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	var img structs.Image
	if err := decodeJSON(w, r, &img); err != nil {
		return nil, err
	}
	args := structs.ImageCreateRequest{Image: &img}
	args.AuthToken = requestToken(r)
	var out structs.SingleImageResponse
	if err := a.rpc.RPC("Image.Create", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.Image, nil
}

func (a *Agent) imageDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	img, err := a.findImage(w, r)
	if err != nil {
		return nil, err
	}
	args := structs.ImageDeleteRequest{ImageID: img.ID}
	args.AuthToken = requestToken(r)
	var out structs.GenericResponse
	if err := a.rpc.RPC("Image.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

// imageUpload streams the body into the image's data and answers the
// image, now active.
func (a *Agent) imageUpload(w http.ResponseWriter, r *http.Request) (any, error) {
	img, err := a.findImage(w, r)
	if err != nil {
		return nil, err
	}
	return a.imageData.Upload(requestToken(r), img.ID, r.ContentLength, r.Body)
}

// imageDownload streams the image's data, with its checksums in
// headers.
func (a *Agent) imageDownload(w http.ResponseWriter, r *http.Request) (any, error) {
	img, err := a.findImage(w, r)
	if err != nil {
		return nil, err
	}
	if !img.HasData() {
		return nil, structs.Errorf(structs.KindNotFound, "image %s has no data", img.ID)
	}
	rc, err := a.imageData.Download(requestToken(r), img, 0, -1)
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
