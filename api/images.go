package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Images manages images: their records, and their data streamed to and
// from the servers' image stores.
type Images struct{ c *Client }

// Images returns a handle on the /v1/images endpoints.
func (c *Client) Images() *Images { return &Images{c} }

// Image is an image record, as Glance's images are.
type Image struct {
	ID string
	// Name is the image's name; names need not be unique.
	Name string
	// Status is queued, saving, active, killed, deleted or deactivated.
	Status string
	// Visibility is public, private, shared or community.
	Visibility string
	// Owner is the owning project's id.
	Owner           string
	DiskFormat      string
	ContainerFormat string
	// Size is the data's size in bytes, VirtualSize the disk's (0 when
	// unknown).
	Size        int64
	VirtualSize int64
	// Checksum is the data's hex MD5; HashAlgo and HashValue its hex
	// SHA-512.
	Checksum  string
	HashAlgo  string
	HashValue string
	// MinDisk (GB) and MinRAM (MB) are what a flavor needs to boot it.
	MinDisk   int
	MinRAM    int
	Protected bool
	Hidden    bool
	Tags      []string
	// Properties are free-form (architecture, hypervisor_type, …).
	Properties map[string]string
	// Locations are the servers that hold the data.
	Locations []*ImageLocation
	// Uploader is the server receiving the data while Status is saving.
	Uploader string
	// CreatedAt and UpdatedAt are unix nanoseconds.
	CreatedAt int64
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// ImageLocation is a server that holds an image's data.
type ImageLocation struct {
	NodeID  string
	AddedAt int64
}

// List returns every image.
func (i *Images) List(q *QueryOptions) ([]*Image, *QueryMeta, error) {
	var out []*Image
	qm, err := i.c.query("/v1/images", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info returns the image with the given id, or the one image with that
// name.
func (i *Images) Info(idOrName string, q *QueryOptions) (*Image, *QueryMeta, error) {
	var out Image
	qm, err := i.c.query("/v1/images/"+url.PathEscape(idOrName), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Create registers a new image (queued, without data) and returns it.
func (i *Images) Create(img *Image) (*Image, *WriteMeta, error) {
	var out Image
	wm, err := i.c.write(http.MethodPost, "/v1/images", nil, img, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete deletes the image with the given id (or unique name).
func (i *Images) Delete(idOrName string) (*WriteMeta, error) {
	return i.c.delete("/v1/images/"+url.PathEscape(idOrName), nil)
}

// Upload streams size bytes (-1 when unknown) of data from r as the
// image's data and returns the image, active once the data is stored.
// The data is never held in memory.
func (i *Images) Upload(idOrName string, r io.Reader, size int64) (*Image, error) {
	req, err := i.c.newRequest(http.MethodPut, "/v1/images/"+url.PathEscape(idOrName)+"/data", r)
	if err != nil {
		return nil, err
	}
	req.ContentLength = size
	if size == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := i.c.send(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out Image
	if err := decodeJSONBody(resp, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ImageData is an image's data being downloaded.
type ImageData struct {
	io.ReadCloser
	// Size is the data's size, MD5 and SHA512 its checksums as the
	// servers recorded them.
	Size   int64
	MD5    string
	SHA512 string
}

// Download opens the image's data; the caller reads and closes it.
func (i *Images) Download(idOrName string) (*ImageData, error) {
	req, err := i.c.newRequest(http.MethodGet, "/v1/images/"+url.PathEscape(idOrName)+"/data", nil)
	if err != nil {
		return nil, err
	}
	resp, err := i.c.send(req)
	if err != nil {
		return nil, err
	}
	return &ImageData{ReadCloser: resp.Body, Size: resp.ContentLength,
		MD5: resp.Header.Get("Content-MD5"), SHA512: resp.Header.Get("X-Stratus-Image-Sha512")}, nil
}

// newRequest builds a request to path with the client's token.
func (c *Client) newRequest(method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	token, err := c.ensureToken()
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set(HeaderToken, token)
	}
	return req, nil
}

// send sends req and returns a 2xx response; any other answer is
// consumed and returned as an *Error. The caller closes the body.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

func decodeJSONBody(resp *http.Response, out any) error {
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding response of %s %s: %w", resp.Request.Method, resp.Request.URL.Path, err)
	}
	return nil
}
