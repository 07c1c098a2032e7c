package neutron

import (
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// setSegments takes a network create's segments (the multi-provider
// extension) as its provider attributes: a Stratus network has exactly
// one segment, so the list must hold one, and shows as provider:*, as
// Neutron shows a single-segment network.
func setSegments(r *structs.NetWriteRequest, v any) error {
	// Attributes are set in name order: the provider:* ones are in.
	for _, f := range r.Fields {
		if strings.HasPrefix(f, "provider:") {
			return apiErrorf(http.StatusBadRequest, "SegmentsSetInConjunctionWithProviders",
				"Segments and provider values cannot both be set.")
		}
	}
	list, err := asList("segments", v)
	if err != nil {
		return err
	}
	if len(list) != 1 {
		return invalid("segments", "a network has exactly one segment, %d given", len(list))
	}
	seg, ok := list[0].(map[string]any)
	if !ok {
		return invalid("segments", "'%s' is not a dictionary", repr(list[0]))
	}
	n := r.Network
	for k, v := range seg {
		switch k {
		case "provider:network_type", "provider:physical_network":
			s, err := asNullString(k, v)
			if err != nil {
				return err
			}
			if k == "provider:network_type" {
				n.NetworkType = s
			} else {
				n.PhysicalNetwork = s
			}
		case "provider:segmentation_id":
			id, err := asNullInt(k, v)
			if err != nil {
				return err
			}
			if id != nil {
				n.SegmentationID = *id
			}
		default:
			return invalid("segments", "unrecognized attribute '%s'", k)
		}
	}
	return nil
}
