package imagestore

import "encoding/binary"

// qcow2Magic starts every qcow2 image ("QFI\xfb").
const qcow2Magic = 0x514649fb

// VirtualSize is the size of the disk an image's data describes, from
// its declared disk format and first bytes: the qcow2 header's size, the
// data's own size for raw and iso, 0 (unknown) otherwise or when the
// header does not match the format.
func VirtualSize(diskFormat string, header []byte, size int64) int64 {
	switch diskFormat {
	case "qcow2":
		if len(header) >= 32 && binary.BigEndian.Uint32(header) == qcow2Magic {
			return int64(binary.BigEndian.Uint64(header[24:32]))
		}
	case "raw", "iso":
		return size
	}
	return 0
}

// EmptyQCOW2 builds a valid, empty qcow2 (version 2) image of the given
// virtual size, as `qemu-img create -f qcow2 -o compat=0.10` would: a
// header cluster, a refcount table, one refcount block and an L1 table,
// 64 KiB clusters. Every guest read of it returns zeros. Dev mode seeds
// it as its "cirros" image.
func EmptyQCOW2(virtualSize int64) []byte {
	const (
		clusterBits = 16
		cluster     = 1 << clusterBits
		l2Entries   = cluster / 8
	)
	l1Size := (virtualSize + cluster*l2Entries - 1) / (cluster * l2Entries)
	if l1Size == 0 {
		l1Size = 1
	}
	buf := make([]byte, 3*cluster+8*l1Size)
	be := binary.BigEndian
	be.PutUint32(buf[0:], qcow2Magic)
	be.PutUint32(buf[4:], 2)                    // version
	be.PutUint32(buf[20:], clusterBits)         // cluster_bits
	be.PutUint64(buf[24:], uint64(virtualSize)) // size
	be.PutUint32(buf[36:], uint32(l1Size))      // l1_size
	be.PutUint64(buf[40:], 3*cluster)           // l1_table_offset
	be.PutUint64(buf[48:], cluster)             // refcount_table_offset
	be.PutUint32(buf[56:], 1)                   // refcount_table_clusters
	be.PutUint64(buf[cluster:], 2*cluster)      // refcount table → block
	for c := 0; c < 4; c++ {                    // clusters 0-3 are in use
		be.PutUint16(buf[2*cluster+2*c:], 1) // 16-bit refcounts
	}
	return buf
}
