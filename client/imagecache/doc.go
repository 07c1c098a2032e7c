// Package imagecache is a hypervisor agent's cache of image files: it
// downloads an image from the servers once (streaming, never whole in
// memory), checks its size and SHA-512 while writing it to a temporary
// file that is renamed into place only when they match, and hands out
// the local path that virt drivers use as a base (the libvirt driver
// makes it the backing file of an instance's qcow2 overlay).
//
// Concurrent requests for one image share one download. The cache is
// bounded: when a new image would pass the limit, the least recently
// used images that no instance on the host uses are removed. Files are
// named by their SHA-512, so the cache is rebuilt from the directory
// after a restart; a small index beside them keeps which image ids each
// file serves and when it was last used.
//
// A Precacher follows the servers' image cache requests (Nova's 2.81
// aggregate image pre-caching) and fetches the images of its host's
// aggregates ahead of any boot.
//
// It must not decide what an instance runs on or talk to a hypervisor:
// it only keeps files.
package imagecache
