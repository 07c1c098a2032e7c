package cinder

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"

	"github.com/stratus-cloud/stratus/structs"
)

// volumeCreateBody is POST /volumes' body.
type volumeCreateBody struct {
	Volume *struct {
		Size               json.RawMessage   `json:"size"`
		Name               *string           `json:"name"`
		Description        *string           `json:"description"`
		DisplayName        *string           `json:"display_name"`
		DisplayDescription *string           `json:"display_description"`
		VolumeType         string            `json:"volume_type"`
		AvailabilityZone   string            `json:"availability_zone"`
		ImageRef           string            `json:"imageRef"`
		ImageID            string            `json:"image_id"`
		SnapshotID         string            `json:"snapshot_id"`
		SourceVolID        string            `json:"source_volid"`
		Metadata           map[string]string `json:"metadata"`
		Multiattach        bool              `json:"multiattach"`
	} `json:"volume"`
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// parseSize reads a volume size as Cinder's schema takes it: an integer
// or a string of digits, at least 1; null or absent is 0 (the source's
// size).
func parseSize(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		if n < 1 {
			return 0, errorf(http.StatusBadRequest, "Invalid input for field/attribute size. Value: %d. %d is less than the minimum of 1", n, n)
		}
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || !digits.MatchString(s) {
		return 0, errorf(http.StatusBadRequest, "Invalid input for field/attribute size. Value: %s. %s is not valid under any of the given schemas", raw, raw)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, errorf(http.StatusBadRequest, "Invalid input for field/attribute size. Value: %s. %s is less than the minimum of 1", s, s)
	}
	return n, nil
}

// volumeCreate answers POST /volumes: 202 with the volume in creating
// (or in error when no storage host can take it).
func (a *API) volumeCreate(q *request) error {
	var body volumeCreateBody
	if err := q.decode(&body); err != nil {
		return err
	}
	b := body.Volume
	if b == nil {
		return errorf(http.StatusBadRequest, "Missing required element 'volume' in request body.")
	}
	size, err := parseSize(b.Size)
	if err != nil {
		return err
	}
	if err := checkMetadata(b.Metadata); err != nil {
		return err
	}
	v := &structs.Volume{SizeGB: size, UserID: q.token.UserID, VolumeTypeID: b.VolumeType,
		AvailabilityZone: b.AvailabilityZone, ImageID: b.ImageRef, SnapshotID: b.SnapshotID,
		SourceVolumeID: b.SourceVolID, Metadata: b.Metadata, Multiattach: b.Multiattach}
	if v.ImageID == "" {
		v.ImageID = b.ImageID
	}
	if n := firstNonNil(b.Name, b.DisplayName); n != nil {
		v.Name = *n
	}
	if d := firstNonNil(b.Description, b.DisplayDescription); d != nil {
		v.Description = *d
	}
	if len(v.Name) > 255 {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute name. Value: %s. is too long", v.Name)
	}
	if err := q.sourceSize(v); err != nil {
		return err
	}
	if err := q.checkZone(v); err != nil {
		return err
	}
	var out structs.SingleVolumeResponse
	if err := q.call("Volume.Create", &structs.VolumeCreateRequest{ProjectID: q.project(), Volume: v}, &out); err != nil {
		return err
	}
	return q.answerVolume(http.StatusAccepted, out.Volume)
}

// sourceSize fills in a volume's size from its snapshot or source
// volume when the request gave none, and its zone from the source's.
func (q *request) sourceSize(v *structs.Volume) error {
	switch {
	case v.SnapshotID != "":
		var out structs.SingleVolumeSnapshotResponse
		if err := q.call("Volume.SnapshotGet", &structs.VolumeSnapshotSpecificRequest{SnapshotID: v.SnapshotID, ProjectID: q.project()}, &out); err != nil {
			return err
		}
		if v.SizeGB == 0 {
			v.SizeGB = out.Snapshot.SizeGB
		}
	case v.SourceVolumeID != "":
		src, err := q.getVolume(v.SourceVolumeID)
		if err != nil {
			return err
		}
		if v.SizeGB == 0 {
			v.SizeGB = src.SizeGB
		}
		if v.AvailabilityZone == "" {
			v.AvailabilityZone = src.AvailabilityZone
		}
	}
	if v.SizeGB == 0 {
		return errorf(http.StatusBadRequest, "Invalid input received: Volume size '%s' must be an integer and greater than 0", "None")
	}
	return nil
}

// checkZone refuses a zone no storage host is in, as Cinder does, and
// places a volume without one in the first zone.
func (q *request) checkZone(v *structs.Volume) error {
	var out structs.VolumeZonesResponse
	if err := q.call("Volume.Zones", &structs.VolumeZonesRequest{}, &out); err != nil {
		return err
	}
	if v.AvailabilityZone == "" {
		if len(out.Zones) > 0 {
			v.AvailabilityZone = out.Zones[0].Name
		}
		return nil
	}
	if !slices.ContainsFunc(out.Zones, func(z structs.VolumeZone) bool { return z.Name == v.AvailabilityZone }) {
		return errorf(http.StatusBadRequest, "Invalid input received: Availability zone '%s' is invalid.", v.AvailabilityZone)
	}
	return nil
}
