package nova

import "github.com/stratus-cloud/stratus/structs"

// What the server view gained after 2.96: the image's properties (2.98)
// and the scheduler hints the server was created with (2.100), in show,
// detail, update and rebuild answers.

// imageMetaProps are the names Nova's ImageMetaProps knows (its fields
// and the legacy names it maps): 2.98 shows the image properties an
// instance keeps that are among them, as Nova filters its image_*
// system metadata.
var imageMetaProps = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{
		"architecture", "auto_disk_config", "bdm_v2", "bittorrent", "block_device_mapping", "cache_in_nova",
		"hw_architecture", "hw_auto_disk_config", "hw_boot_menu", "hw_cdrom_bus", "hw_cpu_cores", "hw_cpu_max_cores",
		"hw_cpu_max_sockets", "hw_cpu_max_threads", "hw_cpu_policy", "hw_cpu_realtime_mask", "hw_cpu_sockets",
		"hw_cpu_thread_policy", "hw_cpu_threads", "hw_device_id", "hw_disk_bus", "hw_disk_type",
		"hw_emulation_architecture", "hw_ephemeral_encryption", "hw_ephemeral_encryption_format",
		"hw_ephemeral_encryption_secret_uuid", "hw_firmware_stateless", "hw_firmware_type", "hw_floppy_bus",
		"hw_input_bus", "hw_ipxe_boot", "hw_locked_memory", "hw_machine_type", "hw_maxphysaddr_bits",
		"hw_maxphysaddr_mode", "hw_mem_encryption", "hw_mem_encryption_model", "hw_mem_page_size", "hw_numa_cpus",
		"hw_numa_mem", "hw_numa_nodes", "hw_pci_numa_affinity_policy", "hw_pmu", "hw_pointer_model",
		"hw_qemu_guest_agent", "hw_redirected_usb_ports", "hw_rescue_bus", "hw_rescue_device", "hw_rng_model",
		"hw_scsi_model", "hw_serial_port_count", "hw_sound_model", "hw_time_hpet", "hw_tpm_model", "hw_tpm_version",
		"hw_usb_model", "hw_video_model", "hw_video_ram", "hw_vif_model", "hw_vif_multiqueue_enabled",
		"hw_viommu_model", "hw_virtio_packed_ring", "hw_vm_mode", "hw_watchdog_action", "hypervisor_type",
		"hypervisor_version_requires", "img_bdm_v2", "img_bittorrent", "img_block_device_mapping",
		"img_cache_in_nova", "img_compression_level", "img_config_drive", "img_hide_hypervisor_id",
		"img_hv_requested_version", "img_hv_type", "img_linked_clone", "img_mappings", "img_owner_id",
		"img_root_device_name", "img_signature", "img_signature_certificate_uuid", "img_signature_hash_method",
		"img_signature_key_type", "img_use_agent", "img_version", "ipxe_boot", "mappings", "os_admin_user",
		"os_command_line", "os_distro", "os_require_quiesce", "os_secure_boot", "os_skip_agent_inject_files_at_boot",
		"os_skip_agent_inject_ssh", "os_type", "owner_id", "root_device_name", "traits_required", "vm_mode",
		"vmware_disktype", "vmware_image_version", "vmware_linked_clone", "vmware_ostype", "xenapi_device_id",
		"xenapi_image_compression_level", "xenapi_skip_agent_inject_files_at_boot", "xenapi_skip_agent_inject_ssh",
		"xenapi_use_agent"} {
		m[k] = true
	}
	return m
}()

// imageProperties is 2.98's image "properties": the standard ones of
// the properties the server was built (or last rebuilt) with.
func imageProperties(inst *structs.Instance) map[string]string {
	out := map[string]string{}
	for k, v := range inst.ImageProperties {
		if imageMetaProps[k] {
			out[k] = v
		}
	}
	return out
}

// schedulerHintsView is 2.100's scheduler_hints: Nova's request spec
// keeps every hint as a list of strings, {} when none was given.
func schedulerHintsView(h *structs.SchedulerHints) map[string][]string {
	out := map[string][]string{}
	if h == nil {
		return out
	}
	for k, v := range h.Other {
		out[k] = append([]string(nil), v...)
	}
	if h.Group != "" {
		out["group"] = []string{h.Group}
	}
	if len(h.SameHost) > 0 {
		out["same_host"] = append([]string(nil), h.SameHost...)
	}
	if len(h.DifferentHost) > 0 {
		out["different_host"] = append([]string(nil), h.DifferentHost...)
	}
	return out
}

// serverImage is a server's image in its view: imageRef's id and
// bookmark, with the properties from 2.98.
func (q *request) serverImage(inst *structs.Instance) any {
	ref := q.imageRef(inst.ImageID)
	if m, ok := ref.(map[string]any); ok && q.atLeast(98) {
		m["properties"] = imageProperties(inst)
	}
	return ref
}
