package server

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// The checks a create request passes before its entry is built, in one
// place (Nova's API and conductor checks of a boot request): the
// request's own fields, its flavor, its image, its scheduler hints and
// target host, and its availability zone. Networks are checked as they
// are built (instanceNetworking, net_instances.go); quotas are checked in
// the FSM as the entry commits, against the state it commits to; the
// Compute API resolves a key pair's name before it calls (a key pair is
// the user's, which the request's KeyName alone does not say).

// createChecks is what validateCreate resolved for the entry.
type createChecks struct {
	count                 int
	flavor                *structs.Flavor
	imageID               string
	imageProps            map[string]string
	autoDisk              bool
	groupID, targetHostID string
	hints                 *structs.SchedulerHints
}

// validateCreate runs every check of a create request against state, in
// the order a client sees their errors: all field errors at once, then
// the flavor, the image, the placement hints and the zone.
func (s *Server) validateCreate(state *fsm.StateStore, args *structs.InstanceCreateRequest) (*createChecks, error) {
	count := args.Count
	if count == 0 {
		count = 1
	}
	if errs := createFieldErrors(args, count); len(errs) > 0 {
		return nil, structs.Errorf(structs.KindInvalid, "instance: %s", strings.Join(errs, "; "))
	}
	flavor, err := createFlavor(state, args.FlavorID)
	if err != nil {
		return nil, err
	}
	v := &createChecks{count: count, flavor: flavor, imageID: args.ImageID, imageProps: args.ImageProperties}
	access := structs.ImageAccess{ProjectID: args.ProjectID, Admin: args.ImageAdmin || args.ProjectID == ""}
	// A root volume stands for the image (bootVolumes).
	if args.ImageID != "" || !bootsFromVolume(args) {
		if img, ok, err := resolveImage(state, args.ImageID, access, flavor); err != nil {
			return nil, err
		} else if ok {
			v.imageID, v.imageProps = img.ID, maps.Clone(img.Properties)
		}
	}
	if v.autoDisk, err = autoDiskConfig(v.imageID, v.imageProps, args.AutoDiskConfig); err != nil {
		return nil, err
	}
	if v.groupID, v.hints, v.targetHostID, err = s.resolveCreatePlacement(state, args); err != nil {
		return nil, err
	}
	if err := s.bootVolumes(state, args, v); err != nil {
		return nil, err
	}
	if args.AZ != "" {
		if ok, err := zoneExists(state, args.AZ); err != nil {
			return nil, err
		} else if !ok {
			return nil, structs.Errorf(structs.KindInvalid, "availability zone %q does not exist", args.AZ)
		}
	}
	return v, nil
}

// createFieldErrors checks the request's own fields, without the state.
func createFieldErrors(args *structs.InstanceCreateRequest, count int) []string {
	var errs []string
	if name := strings.TrimSpace(args.Name); name == "" || len(args.Name) > 255 {
		errs = append(errs, "name must be 1-255 characters")
	}
	if len(args.Description) > 255 {
		errs = append(errs, "description must be at most 255 characters")
	}
	if count < 1 || count > maxInstancesPerRequest {
		errs = append(errs, fmt.Sprintf("count must be between 1 and %d", maxInstancesPerRequest))
	}
	if args.ImageID == "" && !bootsFromVolume(args) {
		errs = append(errs, "an image is required")
	}
	if args.FlavorID == "" {
		errs = append(errs, "a flavor is required")
	}
	errs = append(errs, groupCreateErrors(args)...)
	errs = append(errs, tagAndHostnameErrors(args.Tags, args.Hostname, count)...)
	errs = append(errs, accessIPErrors(&args.AccessIPv4, &args.AccessIPv6)...)
	return errs
}

// createFlavor finds the flavor a create names (by id or name) and checks
// it is enabled and its resources and traits are well formed.
func createFlavor(state *fsm.StateStore, ref string) (*structs.Flavor, error) {
	flavor, err := state.FlavorByIDOrName(nil, ref)
	if err != nil {
		return nil, err
	}
	if flavor == nil {
		return nil, structs.Errorf(structs.KindInvalid, "flavor %q not found", ref)
	}
	if flavor.Disabled {
		return nil, structs.Errorf(structs.KindInvalid, "flavor %q is disabled", flavor.Name)
	}
	if _, err := structs.FlavorResources(flavor); err != nil {
		return nil, err
	}
	if _, _, err := structs.FlavorTraits(flavor); err != nil {
		return nil, err
	}
	return flavor, nil
}

// groupCreateErrors checks the instance-group fields of a create.
func groupCreateErrors(args *structs.InstanceCreateRequest) []string {
	var errs []string
	if args.InstanceGroup != "" && !structs.ValidGroupName(args.InstanceGroup) {
		errs = append(errs, fmt.Sprintf("instance group name %q is not valid", args.InstanceGroup))
	}
	for _, c := range args.Constraints {
		if c == nil {
			errs = append(errs, "empty constraint")
			continue
		}
		if err := c.Validate(); err != nil {
			errs = append(errs, structs.Message(err))
		}
	}
	if len(args.UserData) > structs.MaxGroupUserData {
		errs = append(errs, fmt.Sprintf("user data is %d bytes; at most %d are allowed", len(args.UserData), structs.MaxGroupUserData))
	}
	return errs
}

// resolveCreatePlacement works out a create request's scheduler hints:
// the server group it joins (which must exist), the hints it keeps, and
// the admin's target host (by id or name; "" for none).
func (s *Server) resolveCreatePlacement(state *fsm.StateStore, args *structs.InstanceCreateRequest) (groupID string, hints *structs.SchedulerHints, targetHostID string, err error) {
	if h := args.Hints; !h.Empty() {
		if err := h.ValidateOther(); err != nil {
			return "", nil, "", err
		}
		hints = h.Copy()
		if l, _ := s.ClusterFSMLevel(); l < structs.FSMLevelAllHints || len(hints.Other) == 0 {
			hints.Other = nil
		}
		if len(hints.SameHost) == 0 {
			hints.SameHost = nil
		}
		if len(hints.DifferentHost) == 0 {
			hints.DifferentHost = nil
		}
		if hints.Empty() {
			hints = nil
		}
		if h.Group != "" {
			g, err := state.ServerGroupByID(nil, h.Group)
			if err != nil {
				return "", nil, "", err
			}
			if g == nil {
				return "", nil, "", structs.Errorf(structs.KindInvalid, "Instance group %s could not be found.", h.Group)
			}
			groupID = g.ID
		}
	}
	if args.TargetHost != "" {
		host, err := state.HostByID(nil, args.TargetHost)
		if err == nil && host == nil {
			host, err = state.HostByName(nil, args.TargetHost)
		}
		if err != nil {
			return "", nil, "", err
		}
		if host == nil {
			return "", nil, "", structs.Errorf(structs.KindInvalid, "Compute host %s could not be found.", args.TargetHost)
		}
		targetHostID = host.ID
	}
	return groupID, hints, targetHostID, nil
}

// zoneExists reports whether some host is in the availability zone (its
// effective zone: an aggregate's, its agent's, or the default).
func zoneExists(state *fsm.StateStore, az string) (bool, error) {
	zones, err := state.AvailabilityZones(nil)
	if err != nil {
		return false, err
	}
	return len(zones[az]) > 0, nil
}

// tagAndHostnameErrors checks a create's tags and host name; a host
// name is for one instance only, as in Nova.
func tagAndHostnameErrors(tags []string, hostname string, count int) []string {
	var errs []string
	for _, tag := range tags {
		if err := structs.ValidateTag(tag); err != nil {
			errs = append(errs, structs.Message(err))
		}
	}
	if n := len(structs.SortedTags(tags)); n > structs.MaxServerTags {
		errs = append(errs, fmt.Sprintf("The number of tags exceeded the per-server limit %d", structs.MaxServerTags))
	}
	if hostname != "" {
		if !validHostname(hostname) {
			errs = append(errs, hostnameError(hostname))
		} else if count > 1 {
			errs = append(errs, "a hostname can only be given when creating one instance")
		}
	}
	return errs
}

// accessIPErrors checks access addresses (nil or "" for none) and
// rewrites each valid one in its canonical form, as Nova's
// IPAddress-typed fields store them (Python's netaddr:
// "0:0:0:0:0:babe:dc0c:1602" is "::babe:dc0c:1602").
func accessIPErrors(v4, v6 *string) []string {
	var errs []string
	for version, addr := range map[int]*string{4: v4, 6: v6} {
		if addr == nil {
			continue
		}
		if err := structs.ValidateAccessIP(version, *addr); err != nil {
			errs = append(errs, structs.Message(err))
			continue
		}
		if a, err := netip.ParseAddr(*addr); err == nil {
			*addr = a.String()
		}
	}
	sort.Strings(errs)
	return errs
}

// resolveImage finds the image a create names: by id, else by name when
// exactly one image the caller may see has it. It checks the image is
// active and the flavor big enough, with Nova's messages. ok is false
// when the region has no image at all: then the name is passed to the
// hosts as it is, as before the image service existed.
func resolveImage(state *fsm.StateStore, ref string, access structs.ImageAccess, flavor *structs.Flavor) (img *structs.Image, ok bool, err error) {
	exists, err := state.HasImages(nil)
	if err != nil || !exists {
		return nil, false, err
	}
	notFound := structs.Errorf(structs.KindInvalid, "Image %s could not be found.", ref)
	visible := func(i *structs.Image) (bool, error) {
		if access.Admin || i.Visibility != structs.ImageShared || i.Owner == access.ProjectID {
			return i.VisibleTo(access, nil), nil
		}
		m, err := state.ImageMemberByID(nil, i.ID, access.ProjectID)
		return i.VisibleTo(access, m), err
	}
	if img, err = state.ImageByID(nil, strings.ToLower(ref)); err != nil {
		return nil, true, err
	}
	if img != nil {
		if ok, err := visible(img); err != nil || !ok {
			return nil, true, firstErr(err, notFound)
		}
	} else {
		named, err := state.ImagesByName(nil, ref)
		if err != nil {
			return nil, true, err
		}
		var matches []*structs.Image
		for _, i := range named {
			if ok, err := visible(i); err != nil {
				return nil, true, err
			} else if ok {
				matches = append(matches, i)
			}
		}
		switch len(matches) {
		case 0:
			return nil, true, notFound
		case 1:
			img = matches[0]
		default:
			return nil, true, structs.Errorf(structs.KindInvalid, "Multiple images are named %s; use an image id.", ref)
		}
	}
	if img.Status != structs.ImageActive {
		return nil, true, structs.Errorf(structs.KindInvalid, "Image %s is not active.", img.ID)
	}
	if img.MinRAM > flavor.MemoryMB {
		return nil, true, structs.Errorf(structs.KindInvalid, "Flavor's memory is too small for requested image.")
	}
	if flavor.RootGB > 0 {
		disk := int64(flavor.RootGB) << 30
		for _, size := range []int64{img.Size, img.VirtualSize} {
			if size > disk {
				return nil, true, structs.Errorf(structs.KindInvalid,
					"Flavor's disk is too small for requested image. Flavor disk is %d bytes, image is %d bytes.", disk, size)
			}
		}
		if img.MinDisk > flavor.RootGB {
			return nil, true, structs.Errorf(structs.KindInvalid,
				"Flavor's disk is smaller than the minimum size specified in image metadata. Flavor disk is %d bytes, minimum size is %d bytes.",
				disk, int64(img.MinDisk)<<30)
		}
	}
	return img, true, nil
}

// autoDiskConfig is Nova's auto_disk_config of a new instance: the one
// asked for, else the image's auto_disk_config property read as oslo's
// bool_from_string; an image whose property is "disabled" refuses AUTO.
func autoDiskConfig(imageID string, props map[string]string, asked *bool) (bool, error) {
	prop := props["auto_disk_config"]
	if asked == nil {
		return slices.Contains([]string{"1", "t", "true", "on", "y", "yes"}, strings.ToLower(strings.TrimSpace(prop))), nil
	}
	if *asked && prop == "disabled" {
		return false, structs.Errorf(structs.KindInvalid, "Requested image %s has automatic disk resize disabled.", imageID)
	}
	return *asked, nil
}
