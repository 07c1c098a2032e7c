// Package vmware is the virt.Driver that runs instances as virtual
// machines of a VMware vCenter cluster, through govmomi's vSphere API
// client. As in Nova's VMware driver, one agent represents the whole
// cluster as one host: its fingerprint is the aggregate capacity of the
// cluster's ESXi hosts, and DRS (or vCenter's placement) picks the ESXi
// host inside it.
//
// Each instance is a VM named by its instance id, created in the
// configured folder, resource pool and datastore with the flavor's vCPUs
// and memory, its instanceUuid set to the instance id and the
// extraConfig key stratus.instance_id naming it too — the driver keeps
// no state of its own: it finds VMs by instanceUuid, so a restarted
// agent never creates a second copy. The root disk is a clone of a
// template VM named by the image property vmware_template, or a copy of
// the image file the agent's image cache resolved (InstanceSpec.ImagePath,
// else the stratus_image_path property) — raw, or qcow2 converted to raw
// with qemu-img — uploaded once to the datastore's stratus-images folder
// as the flat extent of a VMDK, then copied per instance and extended to
// root_gb; or an empty disk of root_gb. A config drive is attached as a
// CD-ROM. VNC consoles use the RemoteDisplay.vnc extraConfig keys with a
// port picked from a configured range, as Nova does.
//
// The driver works against govmomi's vcsim simulator in tests; the
// simulator is imported by test files only.
package vmware
