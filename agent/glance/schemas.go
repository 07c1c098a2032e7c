package glance

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// The JSON schemas glanceclient fetches to build its models: the image's
// attributes (with their types, read-only ones marked), free-form string
// properties, and the links it follows.

const uuidPattern = "^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$"

func nullableEnum(values []string) []any {
	out := []any{nil}
	for _, v := range values {
		out = append(out, v)
	}
	return out
}

func imageSchema() map[string]any {
	str := func(desc string, extra ...any) map[string]any {
		m := map[string]any{"type": "string", "description": desc}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	nullable := func(typ, desc string, extra ...any) map[string]any {
		m := map[string]any{"type": []string{"null", typ}, "description": desc}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	return map[string]any{
		"name": "image",
		"properties": map[string]any{
			"id":   str("An identifier for the image", "pattern", uuidPattern),
			"name": nullable("string", "Descriptive name for the image", "maxLength", 255),
			"status": str("Status of the image", "readOnly", true, "enum", []string{
				structs.ImageQueued, structs.ImageSaving, structs.ImageActive, structs.ImageKilled, structs.ImageDeleted,
				"uploading", "importing", "pending_delete", structs.ImageDeactivated}),
			"visibility":       str("Scope of image accessibility", "enum", structs.ImageVisibilities),
			"protected":        map[string]any{"type": "boolean", "description": "If true, image will not be deletable."},
			"os_hidden":        map[string]any{"type": "boolean", "description": "If true, image will not appear in default image list response."},
			"checksum":         nullable("string", "md5 hash of image contents.", "readOnly", true, "maxLength", 32),
			"os_hash_algo":     nullable("string", "Algorithm to calculate the os_hash_value", "readOnly", true, "maxLength", 64),
			"os_hash_value":    nullable("string", "Hexdigest of the image contents using the algorithm specified by the os_hash_algo", "readOnly", true, "maxLength", 128),
			"owner":            nullable("string", "Owner of the image", "maxLength", 255),
			"size":             nullable("integer", "Size of image file in bytes", "readOnly", true),
			"virtual_size":     nullable("integer", "Virtual size of image in bytes", "readOnly", true),
			"container_format": nullable("string", "Format of the container", "enum", nullableEnum(structs.ImageContainerFormats)),
			"disk_format":      nullable("string", "Format of the disk", "enum", nullableEnum(structs.ImageDiskFormats)),
			"created_at":       str("Date and time of image registration", "readOnly", true),
			"updated_at":       str("Date and time of the last image modification", "readOnly", true),
			"tags": map[string]any{"type": "array", "description": "List of strings related to the image",
				"items": map[string]any{"type": "string", "maxLength": 255}},
			"direct_url": str("URL to access the image file kept in external store", "readOnly", true),
			"min_ram":    map[string]any{"type": "integer", "description": "Amount of ram (in MB) required to boot image."},
			"min_disk":   map[string]any{"type": "integer", "description": "Amount of disk space (in GB) required to boot image."},
			"self":       str("An image self url", "readOnly", true),
			"file":       str("An image file url", "readOnly", true),
			"stores":     str("Store in which image data resides.", "readOnly", true),
			"schema":     str("An image schema url", "readOnly", true),
			"locations": map[string]any{"type": "array", "description": "A set of URLs to access the image file kept in external store",
				"items": map[string]any{"type": "object", "required": []string{"url", "metadata"}, "properties": map[string]any{
					"url": map[string]any{"type": "string", "maxLength": 255}, "metadata": map[string]any{"type": "object"}}}},
		},
		"additionalProperties": map[string]any{"type": "string"},
		"links": []map[string]string{
			{"rel": "self", "href": "{self}"},
			{"rel": "enclosure", "href": "{file}"},
			{"rel": "describedby", "href": "{schema}"},
		},
	}
}

func memberSchema() map[string]any {
	return map[string]any{
		"name": "member",
		"properties": map[string]any{
			"created_at": map[string]any{"type": "string", "description": "Date and time of image member creation"},
			"updated_at": map[string]any{"type": "string", "description": "Date and time of last modification of image member"},
			"image_id":   map[string]any{"type": "string", "description": "An identifier for the image", "pattern": uuidPattern},
			"member_id":  map[string]any{"type": "string", "description": "An identifier for the image member (tenantId)"},
			"status": map[string]any{"type": "string", "description": "The status of this image member",
				"enum": []string{structs.MemberPending, structs.MemberAccepted, structs.MemberRejected}},
			"schema": map[string]any{"type": "string", "readOnly": true},
		},
	}
}

func (a *API) schemaImage(q *request) error { return q.json(http.StatusOK, imageSchema()) }

func (a *API) schemaImages(q *request) error {
	return q.json(http.StatusOK, map[string]any{
		"name": "images",
		"properties": map[string]any{
			"images": map[string]any{"type": "array", "items": imageSchema()},
			"schema": map[string]any{"type": "string"},
			"first":  map[string]any{"type": "string"},
			"next":   map[string]any{"type": "string"},
		},
		"links": []map[string]string{
			{"rel": "first", "href": "{first}"},
			{"rel": "next", "href": "{next}"},
			{"rel": "describedby", "href": "{schema}"},
		},
	})
}

func (a *API) schemaMember(q *request) error { return q.json(http.StatusOK, memberSchema()) }

func (a *API) schemaMembers(q *request) error {
	return q.json(http.StatusOK, map[string]any{
		"name": "members",
		"properties": map[string]any{
			"members": map[string]any{"type": "array", "items": memberSchema()},
			"schema":  map[string]any{"type": "string"},
		},
		"links": []map[string]string{{"rel": "describedby", "href": "{schema}"}},
	})
}
