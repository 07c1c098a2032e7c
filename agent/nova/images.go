package nova

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Nova's image proxy (deprecated): images until 2.35, their metadata
// until 2.38, read from and written to the image records with Glance's
// visibility rules, in Nova's shapes.
func (a *API) imageRoutes() []route.Route[handler] {
	const rule = "os_compute_api:image-metadata:"
	return []route.Route[handler]{
		{Pattern: "GET /images", MaxVersion: 35, Access: anyone, Policy: "os_compute_api:images:index", Handle: a.imageList},
		{Pattern: "GET /images/detail", MaxVersion: 35, Access: anyone, Policy: "os_compute_api:images:detail", Handle: a.imageDetail},
		{Pattern: "GET /images/{id}", MaxVersion: 35, Access: anyone, Policy: "os_compute_api:images:show", Handle: a.imageShow},
		{Pattern: "DELETE /images/{id}", MaxVersion: 35, Access: member, Policy: "os_compute_api:images:delete", Handle: a.imageDelete},
		{Pattern: "GET /images/{id}/metadata", MaxVersion: 38, Access: anyone, Policy: rule + "index", Handle: a.imageMetadataList},
		{Pattern: "POST /images/{id}/metadata", MaxVersion: 38, Access: member, Policy: rule + "create", Handle: a.imageMetadataMerge},
		{Pattern: "PUT /images/{id}/metadata", MaxVersion: 38, Access: member, Policy: rule + "update_all", Handle: a.imageMetadataReplace},
		{Pattern: "GET /images/{id}/metadata/{key}", MaxVersion: 38, Access: anyone, Policy: rule + "show", Handle: a.imageMetadataShow},
		{Pattern: "PUT /images/{id}/metadata/{key}", MaxVersion: 38, Access: member, Policy: rule + "update", Handle: a.imageMetadataSet},
		{Pattern: "DELETE /images/{id}/metadata/{key}", MaxVersion: 38, Access: member, Policy: rule + "delete", Handle: a.imageMetadataDelete},
	}
}

// Nova's statuses and progress for Glance's statuses.
var (
	imageStatuses = map[string]string{structs.ImageActive: "ACTIVE", structs.ImageQueued: "SAVING", structs.ImageSaving: "SAVING",
		structs.ImageDeleted: "DELETED", "pending_delete": "DELETED", structs.ImageKilled: "ERROR"}
	imageProgress = map[string]int{structs.ImageQueued: 25, structs.ImageSaving: 50, structs.ImageActive: 100}
)

func (q *request) imageAccess() structs.ImageAccess {
	return structs.ImageAccess{ProjectID: q.token.ProjectID, Admin: q.isAdmin()}
}

// imageLinks are a proxied image's links: Nova's self and bookmark, and
// the image's place in the Image API.
func (q *request) imageLinks(id string) []link {
	glance := strings.TrimSuffix(q.base, MountPath) + "/image/images/" + id
	return append(q.links("images", id), link{Href: glance, Rel: "alternate", Type: "application/vnd.openstack.image"})
}

// imageView is an image in Nova's shape; detail adds everything but id,
// name and links.
func (q *request) imageView(img *structs.Image, detail bool) map[string]any {
	v := map[string]any{"id": img.ID, "name": img.Name, "links": q.imageLinks(img.ID)}
	if !detail {
		return v
	}
	status, ok := imageStatuses[img.Status]
	if !ok {
		status = "UNKNOWN"
	}
	metadata := maps.Clone(img.Properties)
	if metadata == nil {
		metadata = map[string]string{}
	}
	v["status"], v["progress"] = status, imageProgress[img.Status]
	v["minDisk"], v["minRam"], v["metadata"] = img.MinDisk, img.MinRAM, metadata
	v["created"], v["updated"] = isoTime(img.CreatedAt), isoTime(img.UpdatedAt)
	v["OS-EXT-IMG-SIZE:size"] = img.Size
	if adc, ok := img.Properties["auto_disk_config"]; ok {
		v["OS-DCF:diskConfig"] = "MANUAL"
		if strings.EqualFold(adc, "true") {
			v["OS-DCF:diskConfig"] = "AUTO"
		}
	}
	if id := img.Properties["instance_uuid"]; id != "" {
		v["server"] = map[string]any{"id": id, "links": q.links("servers", id)}
	}
	return v
}

// getImage reads an image the caller may see; anything else is Nova's
// 404.
func (q *request) getImage(id string) (*structs.Image, error) {
	notFoundErr := notFound("Image not found.")
	if !structs.IsImageID(id) {
		return nil, notFoundErr
	}
	var resp structs.SingleImageResponse
	if err := q.call("Image.Get", &structs.ImageSpecificRequest{ImageID: id}, &resp); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return nil, notFoundErr
		}
		return nil, err
	}
	img := resp.Image
	var member *structs.ImageMember
	if img.Visibility == structs.ImageShared && !q.isAdmin() && img.Owner != q.token.ProjectID {
		var members structs.ImageMemberListResponse
		if err := q.call("Image.MemberList", &structs.ImageMemberListRequest{ImageID: img.ID}, &members); err != nil {
			return nil, err
		}
		for _, m := range members.Members {
			if m.MemberID == q.token.ProjectID {
				member = m
			}
		}
	}
	if !img.VisibleTo(q.imageAccess(), member) {
		return nil, notFoundErr
	}
	return img, nil
}

func (a *API) imageList(q *request) (*reply, error)   { return a.listImages(q, false) }
func (a *API) imageDetail(q *request) (*reply, error) { return a.listImages(q, true) }

// listImages answers GET /images and /images/detail: what Glance lists
// by default (public images, the project's own, shared ones it
// accepted; all for admins), newest first, with Nova's filters.
func (a *API) listImages(q *request, detail bool) (*reply, error) {
	p, err := q.parsePage()
	if err != nil {
		return nil, err
	}
	v := q.query()
	var resp structs.ImageListResponse
	if err := q.call("Image.List", &structs.ImageListRequest{MemberProjectID: q.token.ProjectID}, &resp); err != nil {
		return nil, err
	}
	accepted := map[string]bool{}
	for _, m := range resp.Members {
		accepted[m.ImageID] = m.Status == structs.MemberAccepted
	}
	filters := []func(*structs.Image) bool{func(img *structs.Image) bool {
		if img.Hidden {
			return false
		}
		switch {
		case q.isAdmin(), img.Visibility == structs.ImagePublic:
			return true
		case img.Owner != "" && img.Owner == q.token.ProjectID:
			return true
		}
		return img.Visibility == structs.ImageShared && accepted[img.ID]
	}}
	if name := v.Get("name"); v.Has("name") {
		filters = append(filters, func(img *structs.Image) bool { return img.Name == name })
	}
	if status := v.Get("status"); v.Has("status") {
		filters = append(filters, func(img *structs.Image) bool {
			return strings.EqualFold(imageStatuses[img.Status], status) || strings.EqualFold(img.Status, status)
		})
	}
	for key, get := range map[string]func(*structs.Image) int{
		"minDisk": func(i *structs.Image) int { return i.MinDisk }, "minRam": func(i *structs.Image) int { return i.MinRAM }} {
		if !v.Has(key) {
			continue
		}
		n, err := atoiParam(key, v.Get(key))
		if err != nil {
			return nil, err
		}
		filters = append(filters, func(img *structs.Image) bool { return get(img) >= n })
	}
	if s := v.Get("server"); s != "" {
		filters = append(filters, func(img *structs.Image) bool {
			return strings.HasSuffix(s, img.Properties["instance_uuid"]) && img.Properties["instance_uuid"] != ""
		})
	}
	if t := v.Get("type"); t != "" {
		filters = append(filters, func(img *structs.Image) bool { return img.Properties["image_type"] == t })
	}
	if s := v.Get("changes-since"); s != "" {
		since, err := parseTime("changes-since", s)
		if err != nil {
			return nil, err
		}
		filters = append(filters, func(img *structs.Image) bool { return img.UpdatedAt >= since.UnixNano() })
	}
	var images []*structs.Image
	for _, img := range resp.Images {
		if all(filters, img) {
			images = append(images, img)
		}
	}
	slices.SortStableFunc(images, func(x, y *structs.Image) int {
		return -cmpInt(x.CreateIndex, y.CreateIndex)
	})
	images, err = paginate(images, p, func(img *structs.Image) string { return img.ID })
	if err != nil {
		return nil, err
	}
	views := make([]map[string]any, 0, len(images))
	for _, img := range images {
		views = append(views, q.imageView(img, detail))
	}
	body := map[string]any{"images": views}
	if len(images) > 0 {
		collection := []string{"images"}
		if detail {
			collection = append(collection, "detail")
		}
		if l := q.nextLinks(p, len(images), images[len(images)-1].ID, collection...); l != nil {
			body["images_links"] = l
		}
	}
	return okReply(body)
}

func atoiParam(name, s string) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' || n > 1<<30 {
			return 0, badRequest("Invalid input for query parameters %s. Value: %s.", name, s)
		}
		n = n*10 + int(c-'0')
	}
	if s == "" {
		return 0, badRequest("Invalid input for query parameters %s. Value: %s.", name, s)
	}
	return n, nil
}

func (a *API) imageShow(q *request) (*reply, error) {
	img, err := q.getImage(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"image": q.imageView(img, true)})
}

// imageDelete answers DELETE /images/{id}: the owner's project (or an
// admin) deletes the image; a protected one is Nova's 403.
func (a *API) imageDelete(q *request) (*reply, error) {
	img, err := q.getImage(q.param("id"))
	if err != nil {
		return nil, err
	}
	if !img.ModifiableBy(q.imageAccess()) {
		return nil, faultf(http.StatusForbidden, "You are not allowed to delete the image.")
	}
	var resp structs.GenericResponse
	if err := q.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: img.ID}, &resp); err != nil {
		switch structs.KindOf(err) {
		case structs.KindPermission:
			return nil, faultf(http.StatusForbidden, "You are not allowed to delete the image.")
		case structs.KindNotFound:
			return nil, notFound("Image not found.")
		}
		return nil, err
	}
	return noContent()
}

func (a *API) imageMetadataList(q *request) (*reply, error) {
	img, err := q.getImage(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"metadata": propertiesOf(img)})
}

func propertiesOf(img *structs.Image) map[string]string {
	if img.Properties == nil {
		return map[string]string{}
	}
	return img.Properties
}

func (a *API) imageMetadataShow(q *request) (*reply, error) {
	img, err := q.getImage(q.param("id"))
	if err != nil {
		return nil, err
	}
	key := q.param("key")
	v, ok := img.Properties[key]
	if !ok {
		return nil, notFound("Image %s has no metadata item %s", img.ID, key)
	}
	return okReply(map[string]any{"meta": map[string]string{key: v}})
}

// updateImageMetadata changes an image's properties on the caller's
// behalf, as Nova asks Glance to.
func (q *request) updateImageMetadata(change func(props map[string]string) error) (*structs.Image, error) {
	for attempt := 0; ; attempt++ {
		img, err := q.getImage(q.param("id"))
		if err != nil {
			return nil, err
		}
		if !img.ModifiableBy(q.imageAccess()) {
			return nil, faultf(http.StatusForbidden, "You are not authorized to access the image the instance was started with.")
		}
		c := img.Copy()
		if c.Properties == nil {
			c.Properties = map[string]string{}
		}
		if err := change(c.Properties); err != nil {
			return nil, err
		}
		if len(c.Properties) > structs.MaxImageProperties {
			return nil, faultf(http.StatusForbidden, "Quota exceeded for metadata_items: Maximum number of metadata items exceeds %d", structs.MaxImageProperties)
		}
		var resp structs.SingleImageResponse
		err = q.call("Image.Update", &structs.ImageUpdateRequest{Image: c, CASIndex: img.ModifyIndex}, &resp)
		if err != nil && structs.KindOf(err) == structs.KindConflict && attempt < 5 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return resp.Image, nil
	}
}

func (a *API) imageMetadataMerge(q *request) (*reply, error) {
	body, err := decodeBody(q, metadataBody)
	if err != nil {
		return nil, err
	}
	set := stringMap(object(body, "metadata"))
	img, err := q.updateImageMetadata(func(props map[string]string) error {
		maps.Copy(props, set)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"metadata": propertiesOf(img)})
}

func (a *API) imageMetadataReplace(q *request) (*reply, error) {
	body, err := decodeBody(q, metadataBody)
	if err != nil {
		return nil, err
	}
	set := stringMap(object(body, "metadata"))
	img, err := q.updateImageMetadata(func(props map[string]string) error {
		clear(props)
		maps.Copy(props, set)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"metadata": propertiesOf(img)})
}

func (a *API) imageMetadataSet(q *request) (*reply, error) {
	body, err := decodeBody(q, metaItemBody)
	if err != nil {
		return nil, err
	}
	meta := stringMap(object(body, "meta"))
	key := q.param("key")
	if _, ok := meta[key]; !ok {
		return nil, badRequest("Request body and URI mismatch")
	}
	if len(meta) > 1 {
		return nil, badRequest("Request body contains too many items")
	}
	if _, err := q.updateImageMetadata(func(props map[string]string) error {
		props[key] = meta[key]
		return nil
	}); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"meta": meta})
}

func (a *API) imageMetadataDelete(q *request) (*reply, error) {
	key := q.param("key")
	_, err := q.updateImageMetadata(func(props map[string]string) error {
		if _, ok := props[key]; !ok {
			return notFound("Image %s has no metadata item %s", q.param("id"), key)
		}
		delete(props, key)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return noContent()
}
