package nova

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// serverCreateSchemas holds POST /servers' schema of every microversion,
// built once: a schema is never changed after it is built, and building
// it for every boot cost more than validating the body.
var serverCreateSchemas = sync.OnceValue(func() []*schema {
	out := make([]*schema, maxMicroversion+1)
	for mv := range out {
		out[mv] = buildServerCreateSchema(mv)
	}
	return out
})

// serverCreateSchema is Nova's POST /servers schema at a microversion.
func serverCreateSchema(mv int) *schema {
	if all := serverCreateSchemas(); mv >= 0 && mv < len(all) {
		return all[mv]
	}
	return buildServerCreateSchema(mv)
}

// buildServerCreateSchema builds Nova's POST /servers schema at a
// microversion.
func buildServerCreateSchema(mv int) *schema {
	network := &schema{types: tObject, props: map[string]*schema{
		"fixed_ip": {types: tString}, "port": {types: tString | tNull, format: checkUUID}, "uuid": {types: tString},
	}}
	if mv >= 32 {
		network.props["tag"] = &schema{types: tString, maxLen: 60, pattern: tagPattern}
	}
	if mv >= 37 {
		network.props["uuid"] = &schema{types: tString, format: checkUUID}
	}
	networks := &schema{types: tArray, items: network}
	if mv >= 37 {
		networks = &schema{types: tArray | tString, items: network, enum: []string{"none", "auto"}}
	}
	server := map[string]*schema{
		"name":                    nameSchema,
		"imageRef":                {types: tString},
		"flavorRef":               {types: tString | tInteger, minLen: 1},
		"adminPass":               {types: tString},
		"metadata":                metadataSchema,
		"networks":                networks,
		"OS-DCF:diskConfig":       {types: tString, enum: []string{"AUTO", "MANUAL"}},
		"accessIPv4":              {types: tString, format: checkIPv4},
		"accessIPv6":              {types: tString, format: checkIPv6},
		"availability_zone":       nameSchema,
		"block_device_mapping":    legacyBDMSchema(),
		"block_device_mapping_v2": bdmV2Schema(mv),
		"config_drive":            booleanSchema,
		"key_name":                nameSchema,
		"min_count":               positiveIntSchema,
		"max_count":               positiveIntSchema,
		"return_reservation_id":   booleanSchema,
		"security_groups": {types: tArray, items: &schema{types: tObject, props: map[string]*schema{
			"name": {types: tString, minLen: 1, maxLen: 255}}}},
		"user_data": {types: tString, maxLen: 65535, format: checkBase64},
	}
	if mv < 57 {
		server["personality"] = &schema{types: tArray, items: &schema{types: tObject, props: map[string]*schema{
			"path": {types: tString, maxLen: 255}, "contents": {types: tString, format: checkBase64}}}}
	}
	if mv >= 19 {
		server["description"] = descriptionSchema
	}
	if mv >= 52 {
		server["tags"] = &schema{types: tArray, maxItems: 50, items: &schema{types: tString, minLen: 1, maxLen: 60, pattern: tagPattern}}
	}
	if mv >= 63 {
		server["trusted_image_certificates"] = &schema{types: tArray | tNull, minItems: 1, maxItems: 50,
			items: &schema{types: tString, minLen: 1}}
	}
	if mv >= 74 {
		server["host"] = hostnameSchema
		server["hypervisor_hostname"] = hostnameSchema
	}
	if mv >= 90 {
		server["hostname"] = hostnameSchema
	}
	required := []string{"name", "flavorRef"}
	if mv >= 37 {
		required = append(required, "networks")
	}
	hints := schedulerHintsSchema()
	return &schema{types: tObject, required: []string{"server"}, props: map[string]*schema{
		"server":                     {types: tObject, props: server, required: required},
		"OS-SCH-HNT:scheduler_hints": hints,
		"os:scheduler_hints":         hints,
	}}
}

// serverCreate answers POST /servers. Networks (and ports, fixed IPs,
// "auto" and "none" by 2.37's rules) and security groups are the
// servers' networking (see networksOf); block_device_mapping_v2 takes
// the local mappings and the volumes (bdm.go, boot_volumes.go); Stratus
// has no trusted certificates yet. Scheduler hints group, same_host and different_host are honoured
// (others are ignored, as in Nova), and an admin's target host
// ("az:host[:node]", or 2.74's host); user data and config_drive go to
// the metadata service and the config drive; personality files and the
// disk config are validated and not used.
func (a *API) serverCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, serverCreateSchema(q.mv))
	if err != nil {
		return nil, err
	}
	in := object(body, "server")
	if err := q.checkUnsupportedCreate(in); err != nil {
		return nil, err
	}
	if err := legacyToV2(in); err != nil {
		return nil, err
	}
	disks, err := blockDevicesOf(in)
	if err != nil {
		return nil, err
	}
	groups, err := securityGroups(in)
	if err != nil {
		return nil, err
	}
	count, err := parseCounts(in)
	if err != nil {
		return nil, err
	}
	args := structs.InstanceCreateRequest{Count: count, ProjectID: q.token.ProjectID, UserID: q.token.UserID, ImageAdmin: q.isAdmin(),
		RequestID: q.id}
	args.Name, _ = stringOf(in, "name")
	if args.ImageID, err = imageOf(in); err != nil && disks == nil {
		return nil, err
	}
	if args.FlavorID, err = q.flavorOf(in); err != nil {
		return nil, err
	}
	if err := q.checkLocalDisks(disks, &args); err != nil {
		return nil, err
	}
	if err := q.placementOf(in, body, &args); err != nil {
		return nil, err
	}
	if key, ok := stringOf(in, "key_name"); ok {
		if err := q.checkKeyName(key); err != nil {
			return nil, err
		}
		args.KeyName = key
	}
	if err := attributesOf(in, &args); err != nil {
		return nil, err
	}
	if err := q.networksOf(in, groups, &args); err != nil {
		return nil, err
	}
	if args.IdempotencyKey, err = q.idempotencyKey(); err != nil {
		return nil, err
	}
	if disks != nil {
		if err := q.bootVolumes(disks.volumes, &args); err != nil {
			return nil, err
		}
	}
	var out structs.InstanceCreateResponse
	err = retry.DoFor(q.r.Context(), q.api.writeRetry, func(bool) error {
		out, args.Forwarded = structs.InstanceCreateResponse{}, false
		return q.call("Instance.Create", &args, &out)
	})
	if err != nil {
		return nil, netFault(err)
	}
	if len(out.Instances) == 0 {
		return nil, faultf(http.StatusInternalServerError, msgUnexpected)
	}
	password, ok := stringOf(in, "adminPass")
	if !ok {
		password = adminPassword()
	}
	return q.createdReply(out.Instances[0], password, groups, boolOf(in["return_reservation_id"]))
}

// placementOf reads where a create may land: its availability zone
// (with an admin's "az:host[:node]"), 2.74's host, and the scheduler
// hints.
func (q *request) placementOf(in, body map[string]any, args *structs.InstanceCreateRequest) error {
	var err error
	if args.AZ, args.TargetHost, err = q.zoneOf(in); err != nil {
		return err
	}
	if target, err := q.requestedHost(in); err != nil {
		return err
	} else if target != "" {
		args.TargetHost = target
	}
	args.Hints, err = q.schedulerHints(body)
	return err
}

// checkKeyName is Nova's 400 for a key pair the caller does not have.
func (q *request) checkKeyName(key string) error {
	var kp structs.SingleKeyPairResponse
	if err := q.call("KeyPair.Get", &structs.KeyPairSpecificRequest{UserID: q.token.UserID, Name: key}, &kp); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return badRequest("Invalid key_name provided.")
		}
		return err
	}
	return nil
}

// attributesOf reads the create's plain attributes: metadata, user
// data, config drive, hostname, access IPs, disk config and tags.
func attributesOf(in map[string]any, args *structs.InstanceCreateRequest) error {
	args.Metadata = stringMap(object(in, "metadata"))
	args.Description, _ = stringOf(in, "description")
	args.UserData = decodeUserData(in)
	args.ConfigDrive = boolOf(in["config_drive"])
	args.Hostname, _ = stringOf(in, "hostname")
	args.AccessIPv4, _ = stringOf(in, "accessIPv4")
	args.AccessIPv6, _ = stringOf(in, "accessIPv6")
	args.AutoDiskConfig = diskConfigOf(in)
	if args.Hostname != "" && args.Count > 1 {
		return badRequest("Cannot specify a hostname when creating multiple servers (min_count or max_count above 1)")
	}
	for _, t := range arrayOf(in, "tags") {
		if s, ok := t.(string); ok {
			args.Tags = append(args.Tags, s)
		}
	}
	return nil
}

// idempotencyKey is the create's idempotency key (the client's
// Idempotency-Key header, a Stratus extension, or one of the agent's),
// which makes retries safe: a boot that committed before an election
// lost its answer is answered, not made again.
func (q *request) idempotencyKey() (string, error) {
	key := q.r.Header.Get("Idempotency-Key")
	if key == "" {
		return retry.NewKey(), nil
	}
	if err := structs.ValidateIdempotencyKey(key); err != nil {
		return "", badRequest("%s", structs.Message(err))
	}
	return key, nil
}

// checkUnsupportedCreate refuses what Stratus cannot do yet, the way
// Nova refuses what a deployment lacks.
func (q *request) checkUnsupportedCreate(in map[string]any) error {
	for _, k := range []string{"trusted_image_certificates"} {
		if list, _ := in[k].([]any); len(list) > 0 {
			return notSupported()
		}
	}
	return nil
}

// securityGroups returns the requested groups for the create answer;
// the servers resolve their names (or ids) in the project.
func securityGroups(in map[string]any) ([]any, error) {
	list, _ := in["security_groups"].([]any)
	return list, nil
}

// imageOf reads imageRef: an id or a link to one (or, as a convenience
// when exactly one image the caller may see has it, a name). The
// servers resolve it against the images and answer Nova's 400s: "Image
// X could not be found.", not active, a flavor too small.
func imageOf(in map[string]any) (string, error) {
	ref, _ := stringOf(in, "imageRef")
	if ref = lastSegment(strings.TrimSpace(ref)); ref == "" {
		return "", badRequest("Missing imageRef attribute")
	}
	return ref, nil
}

// flavorOf reads flavorRef (an id or a link) and checks the flavor.
func (q *request) flavorOf(in map[string]any) (string, error) {
	ref := ""
	switch v := in["flavorRef"].(type) {
	case string:
		ref = lastSegment(v)
	case json.Number:
		ref = v.String()
	}
	f, err := q.getFlavorForCreate(ref)
	if err != nil {
		if structs.KindOf(err) == structs.KindNotFound || isStatus(err, 404) {
			return "", badRequest("Invalid flavorRef provided.")
		}
		return "", err
	}
	return f.ID, nil
}

// getFlavorForCreate reads a flavor for a boot from this agent's servers'
// state when it is there (no round trip to the leader, which checks the
// flavor again as it commits the boot), else as getFlavor does: a flavor
// created an instant ago may not have reached this server yet.
func (q *request) getFlavorForCreate(id string) (*structs.Flavor, error) {
	var out structs.SingleFlavorResponse
	args := &structs.FlavorSpecificRequest{ID: id, QueryOptions: structs.QueryOptions{AllowStale: true}}
	if err := q.call("Flavor.Get", args, &out); err == nil && out.Flavor != nil && out.Flavor.ID == id && q.visible(out.Flavor) {
		return out.Flavor, nil
	}
	return q.getFlavor(id)
}

// zoneOf reads availability_zone and, from Nova's admin-only
// "zone:host[:node]" forcing, the id of the host to build on.
func (q *request) zoneOf(in map[string]any) (string, string, error) {
	az, _ := stringOf(in, "availability_zone")
	zone, host, node, err := forcedHost(az)
	if err != nil || (host == "" && node == "") {
		return zone, "", err
	}
	if !q.isAdmin() {
		return "", "", policyFault("os_compute_api:servers:create:forced_host")
	}
	target, err := q.targetHost(host, node)
	return zone, target, err
}

// isStatus reports whether err is a fault of the given status.
func isStatus(err error, status int) bool {
	s, _ := statusOf(err)
	return s == status
}
