// Package ironic is the virt.Driver for bare-metal servers managed by
// OpenStack Ironic, which it talks to through gophercloud's
// openstack/baremetal/v1 client, with Keystone auth or Ironic's noauth
// mode.
//
// As in Nova's Ironic driver, every node is a host of its own (a
// resource provider) whose whole capacity one instance consumes through
// a custom resource class: a node of resource_class "baremetal-gold"
// offers one CUSTOM_BAREMETAL_GOLD, and zero VCPU, MEMORY_MB and
// DISK_GB, so only a flavor asking resources:CUSTOM_BAREMETAL_GOLD=1
// (with resources:VCPU=0 and so on) lands on it. A node in maintenance,
// or in any provision state but available, offers nothing unless it runs
// one of our instances. The driver is a virt.MultiHost: the agent
// registers one host per node and gives each the driver Host scopes to
// that node.
//
// Spawn claims the node by setting its instance_uuid (Ironic refuses a
// second claim with 409) and instance_info (image_source, root_gb,
// capabilities, display_name), validates it, deploys it (provision
// target "active", with a config drive when the instance has user
// data), and polls with its own loop until the node is active, failing
// with the node's last_error when it ends in "deploy failed" or "error"
// — after tearing it down again. Destroy tears the node down ("deleted",
// then Ironic cleans it back to available and forgets the instance).
// Every change is retried with backoff while Ironic answers 409 (node
// locked by its conductor). The driver must not keep state of its own:
// an instance is the node whose instance_uuid is its id.
package ironic
