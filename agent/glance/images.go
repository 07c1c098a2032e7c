package glance

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Attributes of an image as Glance's request deserializer sorts them.
var (
	// readOnlyAttrs may never be set by a client.
	readOnlyAttrs = []string{"created_at", "updated_at", "status", "checksum", "size", "virtual_size", "direct_url",
		"self", "file", "schema", "id", "os_hash_algo", "os_hash_value", "stores"}
	// reservedAttrs may not be used as properties.
	reservedAttrs = []string{"location", "deleted", "deleted_at"}
	// baseAttrs are the image's own attributes; the rest are properties.
	baseAttrs = []string{"checksum", "created_at", "container_format", "disk_format", "id", "min_disk", "min_ram", "name",
		"size", "virtual_size", "status", "tags", "owner", "updated_at", "visibility", "protected", "os_hidden",
		"os_hash_algo", "os_hash_value"}
)

// reservedNamespace is Glance's prefix for its own properties.
const reservedNamespace = "os_glance"

// isoTime renders unix nanoseconds as Glance does.
func isoTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05Z")
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// imageView is an image in Glance's body: its properties at the top
// level beside its attributes.
func imageView(img *structs.Image) map[string]any {
	v := make(map[string]any, len(img.Properties)+24)
	for k, p := range img.Properties {
		v[k] = p
	}
	var size, vsize any
	if img.HasData() {
		size = img.Size
	}
	if img.VirtualSize > 0 {
		vsize = img.VirtualSize
	}
	tags := img.Tags
	if tags == nil {
		tags = []string{}
	}
	maps.Copy(v, map[string]any{
		"id": img.ID, "name": nullString(img.Name), "status": img.Status, "visibility": img.Visibility,
		"protected": img.Protected, "os_hidden": img.Hidden, "owner": nullString(img.Owner),
		"disk_format": nullString(img.DiskFormat), "container_format": nullString(img.ContainerFormat),
		"size": size, "virtual_size": vsize, "checksum": nullString(img.Checksum),
		"os_hash_algo": nullString(img.HashAlgo), "os_hash_value": nullString(img.HashValue),
		"min_disk": img.MinDisk, "min_ram": img.MinRAM, "tags": tags,
		"created_at": isoTime(img.CreatedAt), "updated_at": isoTime(img.UpdatedAt),
		"self": "/v2/images/" + img.ID, "file": "/v2/images/" + img.ID + "/file", "schema": "/v2/schemas/image",
	})
	return v
}

// notFoundImage is Glance's 404 for an image the caller cannot see.
func notFoundImage(id string) error {
	return errorf(http.StatusNotFound, "No image found with ID %s", id)
}

// visibleImage reads an image the caller may see, with the caller's
// membership of it (nil if none); any other image is a 404.
func (q *request) visibleImage(id string) (*structs.Image, *structs.ImageMember, error) {
	if !structs.IsImageID(id) {
		return nil, nil, notFoundImage(id)
	}
	var resp structs.SingleImageResponse
	if err := q.call("Image.Get", &structs.ImageSpecificRequest{ImageID: id}, &resp); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return nil, nil, notFoundImage(id)
		}
		return nil, nil, err
	}
	img := resp.Image
	var member *structs.ImageMember
	if img.Visibility == structs.ImageShared && !q.isAdmin() && img.Owner != q.token.ProjectID {
		var members structs.ImageMemberListResponse
		if err := q.call("Image.MemberList", &structs.ImageMemberListRequest{ImageID: img.ID}, &members); err != nil {
			return nil, nil, err
		}
		for _, m := range members.Members {
			if m.MemberID == q.token.ProjectID {
				member = m
			}
		}
	}
	if !img.VisibleTo(q.access(), member) {
		return nil, nil, notFoundImage(id)
	}
	return img, member, nil
}

// modifiableImage reads an image the caller may change: 404 if it cannot
// see it, 403 if it may only look.
func (q *request) modifiableImage(id, action string) (*structs.Image, error) {
	img, _, err := q.visibleImage(id)
	if err != nil {
		return nil, err
	}
	if !q.isMember() || !img.ModifiableBy(q.access()) {
		return nil, notAuthorized(action)
	}
	return img, nil
}

// notAuthorized is Glance's policy refusal.
func notAuthorized(action string) error {
	return errorf(http.StatusForbidden, "You are not authorized to complete %s action.", action)
}

func schemaError(format string, args ...any) error {
	return errorf(http.StatusBadRequest, "Provided object does not match schema 'image': "+format, args...)
}

// setAttr sets one of the image's attributes, or a property, from a JSON
// value, as Glance's schema checks it.
func setAttr(img *structs.Image, key string, v any) error {
	str := func(nullable bool) (string, error) {
		switch s := v.(type) {
		case string:
			return s, nil
		case nil:
			if nullable {
				return "", nil
			}
		}
		return "", schemaError("%s is not of type 'string'", jsonText(v))
	}
	enum := func(values []string) (string, error) {
		s, err := str(true)
		if err == nil && s != "" && !slices.Contains(values, s) {
			err = schemaError("'%s' is not one of %s", s, pyList(values))
		}
		return s, err
	}
	var err error
	switch key {
	case "name":
		img.Name, err = str(true)
		if err == nil && len(img.Name) > 255 {
			err = schemaError("'%s' is too long", img.Name)
		}
	case "visibility":
		var s string
		if s, err = enum(structs.ImageVisibilities); err == nil && s == "" {
			err = schemaError("None is not one of %s", pyList(structs.ImageVisibilities))
		}
		img.Visibility = s
	case "owner":
		img.Owner, err = str(true)
		if err == nil && len(img.Owner) > 255 {
			err = schemaError("'%s' is too long", img.Owner)
		}
	case "disk_format":
		img.DiskFormat, err = enum(structs.ImageDiskFormats)
	case "container_format":
		img.ContainerFormat, err = enum(structs.ImageContainerFormats)
	case "protected", "os_hidden":
		b, ok := v.(bool)
		if !ok {
			return schemaError("%s is not of type 'boolean'", jsonText(v))
		}
		if key == "protected" {
			img.Protected = b
		} else {
			img.Hidden = b
		}
	case "min_ram", "min_disk":
		i, err := minSize(v)
		if err != nil {
			return err
		}
		if key == "min_ram" {
			img.MinRAM = i
		} else {
			img.MinDisk = i
		}
	case "tags":
		tags, err := tagsOf(v)
		if err != nil {
			return err
		}
		img.Tags = tags
	default:
		s, ok := v.(string)
		if !ok {
			return schemaError("%s is not of type 'string'", jsonText(v))
		}
		if len(key) > 255 {
			return errorf(http.StatusBadRequest, "Custom property should not be greater than 255 characters.")
		}
		if img.Properties == nil {
			img.Properties = map[string]string{}
		}
		img.Properties[key] = s
	}
	return err
}

// minSize reads min_ram or min_disk: an integer of 0 to 2^31-1.
func minSize(v any) (int, error) {
	n, ok := v.(json.Number)
	i, perr := n.Int64()
	if !ok || perr != nil {
		return 0, schemaError("%s is not of type 'integer'", jsonText(v))
	}
	if i < 0 {
		return 0, errorf(http.StatusBadRequest, "Cannot be a negative value.")
	}
	if i > 1<<31-1 {
		return 0, schemaError("%d is greater than the maximum of 2147483647", i)
	}
	return int(i), nil
}

// tagsOf reads an image's tags: strings of at most 255 characters, at
// most structs.MaxImageTags of them.
func tagsOf(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, schemaError("%s is not of type 'array'", jsonText(v))
	}
	tags := make([]string, 0, len(list))
	for _, t := range list {
		s, ok := t.(string)
		if !ok {
			return nil, schemaError("%s is not of type 'string'", jsonText(t))
		}
		if len(s) > 255 {
			return nil, schemaError("'%s' is too long", s)
		}
		tags = append(tags, s)
	}
	if len(tags) > structs.MaxImageTags {
		return nil, errorf(http.StatusRequestEntityTooLarge, "Maximum number of tags exceeded. Attempted: %d, Maximum: %d", len(tags), structs.MaxImageTags)
	}
	return tags, nil
}

// checkSettable refuses read-only and reserved attributes.
func checkSettable(key string) error {
	if slices.Contains(readOnlyAttrs, key) {
		return errorf(http.StatusForbidden, "Attribute '%s' is read-only.", key)
	}
	if slices.Contains(reservedAttrs, key) || strings.HasPrefix(key, reservedNamespace) {
		return errorf(http.StatusForbidden, "Attribute '%s' is reserved.", key)
	}
	return nil
}

func jsonText(v any) string {
	if v == nil {
		return "None"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func pyList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "'" + v + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// checkPolicy applies Glance's rules on who may set an owner and a
// visibility.
func (q *request) checkPolicy(before, after *structs.Image) error {
	if after.Visibility == structs.ImagePublic && (before == nil || before.Visibility != structs.ImagePublic) && !q.isAdmin() {
		return notAuthorized("publicize_image")
	}
	if before == nil && after.Owner != q.token.ProjectID && !q.isAdmin() {
		return errorf(http.StatusForbidden, "You are not permitted to create images owned by '%s'.", after.Owner)
	}
	if before != nil && after.Owner != before.Owner && !q.isAdmin() {
		return errorf(http.StatusForbidden, "Owner can't be updated by non admin.")
	}
	return nil
}

// imageCreate answers POST /v2/images: 201 with the queued image.
func (a *API) imageCreate(q *request) error {
	if err := q.requireJSON(); err != nil {
		return err
	}
	if !q.isMember() {
		return notAuthorized("add_image")
	}
	var body map[string]any
	if err := q.decodeJSON(&body); err != nil {
		return err
	}
	if body == nil {
		return schemaError("the body is not an object")
	}
	img := &structs.Image{Owner: q.token.ProjectID, Visibility: structs.ImageShared, Properties: map[string]string{}}
	s3Source, fromS3 := body[S3SourceKey]
	delete(body, S3SourceKey)
	for _, k := range sortedKeys(body) {
		v := body[k]
		if k == "id" {
			id, ok := v.(string)
			if !ok || !structs.IsImageID(id) {
				return schemaError("%s does not match the pattern of an image id", jsonText(v))
			}
			img.ID = strings.ToLower(id)
			continue
		}
		if k == "locations" {
			return errorf(http.StatusForbidden, "Attribute '%s' is read-only.", k)
		}
		if err := checkSettable(k); err != nil {
			return err
		}
		if err := setAttr(img, k, v); err != nil {
			return err
		}
	}
	if len(img.Properties) > structs.MaxImageProperties {
		return errorf(http.StatusRequestEntityTooLarge, "Maximum number of properties exceeded. Attempted: %d, Maximum: %d", len(img.Properties), structs.MaxImageProperties)
	}
	if err := q.checkPolicy(nil, img); err != nil {
		return err
	}
	if fromS3 {
		return a.createFromS3(q, img, s3Source)
	}
	var resp structs.SingleImageResponse
	if err := q.call("Image.Create", &structs.ImageCreateRequest{Image: img}, &resp); err != nil {
		return err
	}
	q.w.Header().Set("Location", baseURL(q.r)+"/v2/images/"+resp.Image.ID)
	return q.json(http.StatusCreated, imageView(resp.Image))
}

// imageShow answers GET /v2/images/{id}.
func (a *API) imageShow(q *request) error {
	img, _, err := q.visibleImage(q.param("id"))
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, imageView(img))
}

// imageDelete answers DELETE /v2/images/{id}: 204; a protected image is
// a 403.
func (a *API) imageDelete(q *request) error {
	img, err := q.modifiableImage(q.param("id"), "delete_image")
	if err != nil {
		return err
	}
	var resp structs.GenericResponse
	if err := q.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: img.ID}, &resp); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return errorf(http.StatusNotFound, "Failed to find image %s to delete", img.ID)
		}
		return err
	}
	return q.noContent()
}

// imageDeactivate and imageReactivate answer the admin actions: 204.
func (a *API) imageDeactivate(q *request) error {
	return a.imageAction(q, structs.ImageDeactivate)
}

func (a *API) imageReactivate(q *request) error {
	return a.imageAction(q, structs.ImageReactivate)
}

func (a *API) imageAction(q *request, op string) error {
	img, _, err := q.visibleImage(q.param("id"))
	if err != nil {
		return err
	}
	if !q.isAdmin() {
		return notAuthorized(op)
	}
	var resp structs.SingleImageResponse
	if err := q.call("Image.Data", &structs.ImageDataRequest{Entry: &structs.ImageDataEntry{ImageID: img.ID, Op: op}}, &resp); err != nil {
		return err
	}
	return q.noContent()
}

// update applies change to a copy of the image and stores it, again on
// a fresh copy when another writer got there first.
func (q *request) update(id, action string, change func(*structs.Image) error) (*structs.Image, error) {
	for attempt := 0; ; attempt++ {
		img, err := q.modifiableImage(id, action)
		if err != nil {
			return nil, err
		}
		c := img.Copy()
		if err := change(c); err != nil {
			return nil, err
		}
		if err := q.checkPolicy(img, c); err != nil {
			return nil, err
		}
		var resp structs.SingleImageResponse
		err = q.call("Image.Update", &structs.ImageUpdateRequest{Image: c, CASIndex: img.ModifyIndex}, &resp)
		if err != nil && structs.KindOf(err) == structs.KindConflict && strings.Contains(err.Error(), "changed concurrently") && attempt < 5 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return resp.Image, nil
	}
}

// tagAdd answers PUT /v2/images/{id}/tags/{tag}: 204.
func (a *API) tagAdd(q *request) error {
	tag := q.param("tag")
	if len(tag) > 255 {
		return errorf(http.StatusBadRequest, "Provided object does not match schema 'image': '%s' is too long", tag)
	}
	_, err := q.update(q.param("id"), "modify_image", func(img *structs.Image) error {
		if img.HasTag(tag) {
			return nil
		}
		if len(img.Tags) >= structs.MaxImageTags {
			return errorf(http.StatusRequestEntityTooLarge, "Maximum number of tags exceeded. Attempted: %d, Maximum: %d", len(img.Tags)+1, structs.MaxImageTags)
		}
		img.Tags = append(img.Tags, tag)
		return nil
	})
	if err != nil {
		return err
	}
	return q.noContent()
}

// tagDelete answers DELETE /v2/images/{id}/tags/{tag}: 204, 404 for a
// tag the image does not have.
func (a *API) tagDelete(q *request) error {
	tag := q.param("tag")
	_, err := q.update(q.param("id"), "modify_image", func(img *structs.Image) error {
		if !img.HasTag(tag) {
			return errorf(http.StatusNotFound, "Tag %s not found.", tag)
		}
		img.Tags = slices.DeleteFunc(img.Tags, func(t string) bool { return t == tag })
		return nil
	})
	if err != nil {
		return err
	}
	return q.noContent()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
