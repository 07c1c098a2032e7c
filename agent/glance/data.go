package glance

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// imageUpload answers PUT /v2/images/{id}/file: the body is streamed to
// a server's image store (never held here), and the image goes queued →
// saving → active; 204. A failed upload returns the image to queued.
func (a *API) imageUpload(q *request) error {
	if ct := q.contentType(); ct != "application/octet-stream" {
		return errorf(http.StatusUnsupportedMediaType, "Content type %s not supported", ct)
	}
	img, err := q.modifiableImage(q.param("id"), "upload_image")
	if err != nil {
		return err
	}
	if img.Status != structs.ImageQueued {
		return errorf(http.StatusConflict, "Image status transition from %s to %s is not allowed", img.Status, structs.ImageSaving)
	}
	size := q.r.ContentLength
	if size > structs.ImageSizeCap {
		return errorf(http.StatusRequestEntityTooLarge, "The incoming image is too large: %d bytes exceed the limit of %d bytes", size, structs.ImageSizeCap)
	}
	if a.data == nil {
		return errorf(http.StatusServiceUnavailable, "Image data cannot be stored by this agent.")
	}
	if _, err := a.data.Upload(q.authToken, img.ID, size, q.r.Body); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return errorf(http.StatusGone, "%s", structs.Message(err))
		}
		return err
	}
	return q.noContent()
}

// imageDownload answers GET /v2/images/{id}/file: the data with
// Content-MD5 (Glance's checksum header), 206 for a Range, 204 when the
// image has no data, 403 for a deactivated image unless admin.
func (a *API) imageDownload(q *request) error {
	img, _, err := q.visibleImage(q.param("id"))
	if err != nil {
		return err
	}
	if img.Status == structs.ImageDeactivated && !q.isAdmin() {
		return errorf(http.StatusForbidden, "The requested image has been deactivated. Image data download is forbidden.")
	}
	if !img.HasData() {
		return q.noContent()
	}
	offset, length, partial, err := parseRange(q.r.Header.Get("Range"), img.Size)
	if err != nil {
		q.w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", img.Size))
		return err
	}
	if a.data == nil {
		return errorf(http.StatusServiceUnavailable, "Image data cannot be read by this agent.")
	}
	rc, err := a.data.Download(q.authToken, img, offset, length)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := q.w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	h.Set("Accept-Ranges", "bytes")
	if img.Checksum != "" {
		h.Set("Content-MD5", img.Checksum)
	}
	status := http.StatusOK
	if partial {
		status = http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", offset, offset+length-1, img.Size))
	}
	q.wrote = true
	q.w.WriteHeader(status)
	n, err := io.CopyBuffer(q.w, rc, make([]byte, 1<<20))
	if err == nil && n != length {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// parseRange reads a single-range Range header ("bytes=a-b", "bytes=a-",
// "bytes=-n"). A header it does not understand is ignored, as RFC 9110
// allows; a range outside the data is 416.
func parseRange(header string, size int64) (offset, length int64, partial bool, err error) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(header), "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return 0, size, false, nil
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return 0, size, false, nil
	}
	unsatisfiable := errorf(http.StatusRequestedRangeNotSatisfiable, "Requested range not satisfiable")
	if first == "" {
		n, perr := strconv.ParseInt(last, 10, 64)
		if perr != nil || n < 0 {
			return 0, size, false, nil
		}
		if n == 0 || size == 0 {
			return 0, 0, false, unsatisfiable
		}
		n = min(n, size)
		return size - n, n, true, nil
	}
	start, perr := strconv.ParseInt(first, 10, 64)
	if perr != nil || start < 0 {
		return 0, size, false, nil
	}
	end := size - 1
	if last != "" {
		if end, perr = strconv.ParseInt(last, 10, 64); perr != nil || end < start {
			return 0, size, false, nil
		}
		end = min(end, size-1)
	}
	if start >= size {
		return 0, 0, false, unsatisfiable
	}
	return start, end - start + 1, true, nil
}
