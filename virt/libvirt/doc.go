// Package libvirt is the virt.Driver that runs instances as real QEMU/KVM
// virtual machines of one libvirtd, which it talks to over libvirt's RPC
// protocol (github.com/digitalocean/go-libvirt, no cgo) on its unix socket
// or TCP. Domains are described with libvirt.org/go/libvirtxml structs.
//
// Each instance is a persistent domain named stratus-<id> (with a
// namespace, stratus-<namespace>-<id>), of type kvm when libvirtd offers
// it and qemu (TCG) otherwise, with ACPI, a serial console logged to a
// file, VNC on a configurable address, and a <metadata> element in the
// https://stratus-cloud.dev/xmlns/libvirt/instance/1 namespace that ties
// it to the instance (id, name, flavor, image, disks) — the driver keeps
// no state of its own, so a restarted agent finds its instances again and
// never defines a second copy. Disks are qcow2 volumes of a "dir" storage
// pool the driver manages: the root disk an overlay whose backing file is
// InstanceSpec.ImagePath, the agent's cached copy of the image (raw or
// qcow2, used in place), else a copy in the pool of the local file the
// image property stratus_image_path names (a fallback for images without
// data in the image service), or empty when there is neither; the
// ephemeral and swap disks of the flavor, empty (not formatted). A spawn
// that fails removes everything it created.
//
// Volume names carry the spawn's attempt, a random suffix recorded in the
// metadata (stratus-<id>+<attempt>-disk), and every volume is deleted by
// the name its domain recorded, never by one worked out again; creating
// a volume never replaces one. So when a move builds the instance on
// another host over shared storage, neither host ever writes or deletes
// the other's disks; an evacuation from shared storage builds on copies
// of the down host's disks (SharedDisks). Resize grows the disks in
// place, keeping the guest's data. Live migration without shared storage
// copies the disks onto volumes it prepares in the destination's pool,
// only the guest's writes when the destination has the image.
//
// The driver keeps one connection to libvirtd, dialled again with backoff
// when libvirtd restarts; operations wait a while for it and then fail
// with ErrUnavailable, and an operation cut short by a lost connection is
// made again on the next one. Each connection subscribes once to domain
// lifecycle events, which Events passes on (virt.EventSource) so the
// agent sees a guest that shut itself down within a second.
//
// It supports pause, suspend (managed save), resize, rescue, snapshots
// (qemu-img convert), the serial console log and VNC consoles, and live
// migration between libvirtds that can reach each other (when configured
// with a migration URI). It does not migrate stopped instances' disks or
// hot-plug volumes and interfaces, and gives guests no network yet.
//
// It must not know about Raft, RPC or the state store: like every driver
// it sees one host and the instances on it, nothing more. It assumes it
// runs on the host libvirtd runs on: base images are files there (the
// agent's image cache, or copies in the pool directory), and so are
// console logs and snapshots.
package libvirt
