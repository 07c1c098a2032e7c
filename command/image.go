package command

import (
	"crypto/md5"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	groups["image"] = "Register, list, upload and download images"
	register("image create", imageCreateCommand)
	register("image list", imageListCommand)
	register("image show", imageShowCommand)
	register("image delete", imageDeleteCommand)
	register("image download", imageDownloadCommand)
}

// diskFormats maps file extensions to disk formats for image create.
var diskFormats = map[string]string{".qcow2": "qcow2", ".img": "raw", ".raw": "raw", ".iso": "iso", ".vmdk": "vmdk",
	".vhd": "vhd", ".vhdx": "vhdx", ".vdi": "vdi", ".ploop": "ploop", ".ami": "ami", ".ari": "ari", ".aki": "aki"}

var imageCreateCommand = (&spec{
	synopsis: "Register an image and upload its data",
	args:     "[options] NAME",
	help: `Register an image named NAME and, with -file, upload its data. The data
is streamed to a server, which stores it, records the image active and
copies it to a second server; nothing is held in memory. A progress bar
is shown on a terminal.

The disk format defaults to the one the file's extension names (.qcow2,
.img and .raw, .iso, .vmdk, …), else raw. If the upload fails, the image
record is deleted again.

With -from-s3 BUCKET/KEY instead of -file, the image is made of an
object of the S3 object store: it is active at once, and its data is the
object's (no byte is copied).`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		img := &api.Image{Properties: map[string]string{}}
		file := fs.String("file", "", "Upload the image's data from `PATH` (\"-\" for standard input).")
		fromS3 := fs.String("from-s3", "", "Make the image of the S3 object `BUCKET/KEY` (no copy).")
		fs.StringVar(&img.DiskFormat, "disk-format", "", "The disk format: raw, qcow2, vmdk, vhd, vhdx, vdi, iso, ploop, ami, ari or aki.")
		fs.StringVar(&img.ContainerFormat, "container-format", "bare", "The container format: bare, ovf, ova, docker, compressed, ami, ari or aki.")
		fs.StringVar(&img.Visibility, "visibility", "public", "Who may see the image: public, private, shared or community.")
		fs.StringVar(&img.Owner, "project", "", "The `ID` of the project that owns the image.")
		fs.IntVar(&img.MinDisk, "min-disk", 0, "The smallest root disk, in GB, that can boot the image.")
		fs.IntVar(&img.MinRAM, "min-ram", 0, "The smallest memory, in MB, that can boot the image.")
		fs.BoolVar(&img.Protected, "protected", false, "Protect the image from deletion.")
		fs.Var(properties(img.Properties), "property", "A property, as `KEY=VALUE` (architecture, hypervisor_type, os_distro, …). May be repeated.")
		tags := &stringList{}
		fs.Var(tags, "tag", "A `TAG`. May be repeated.")
		return func(e *env, args []string) int {
			img.Name, img.Tags = args[0], *tags
			if *fromS3 != "" {
				return imageFromS3(e, img, *file, *fromS3)
			}
			var data io.Reader
			size := int64(-1)
			switch *file {
			case "":
			case "-":
				data = os.Stdin
			default:
				f, err := os.Open(*file)
				if err != nil {
					return e.fail("Error opening image file: %v", err)
				}
				defer f.Close()
				if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
					size = st.Size()
				}
				data = f
				if img.DiskFormat == "" {
					img.DiskFormat = diskFormats[strings.ToLower(filepath.Ext(*file))]
				}
			}
			if img.DiskFormat == "" {
				img.DiskFormat = "raw"
			}
			out, _, err := e.client.Images().Create(img)
			if err != nil {
				return e.fail("Error creating image: %v", err)
			}
			if data != nil {
				p := newTransfer(e.ui.Stderr, "Uploading "+out.Name, size)
				up, err := e.client.Images().Upload(out.ID, p.reader(data), size)
				p.finish(err == nil)
				if err != nil {
					if _, derr := e.client.Images().Delete(out.ID); derr != nil {
						return e.fail("Error uploading image data: %v (and deleting the image %s: %v)", err, out.ID, derr)
					}
					return e.fail("Error uploading image data: %v", err)
				}
				out = up
			}
			return e.render(out, func(w io.Writer) {
				if out.Status == "active" {
					fmt.Fprintf(w, "Image %q created with ID %q: %s, MD5 %s\n", out.Name, out.ID, humanBytes(out.Size), out.Checksum)
					return
				}
				fmt.Fprintf(w, "Image %q created with ID %q (%s, no data yet)\n", out.Name, out.ID, out.Status)
			})
		}
	},
}).factory()

var imageListCommand = (&spec{
	synopsis: "List images",
	args:     "[options]",
	help:     "List every image.",
	nargs:    exactly(0),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			images, _, err := e.client.Images().List(e.queryOptions())
			if err != nil {
				return e.fail("Error listing images: %v", err)
			}
			if images == nil {
				images = []*api.Image{}
			}
			return e.render(images, func(w io.Writer) {
				if len(images) == 0 {
					fmt.Fprintln(w, "No images found")
					return
				}
				rows := make([][]string, 0, len(images))
				for _, img := range images {
					size := "-"
					if img.HashValue != "" {
						size = humanBytes(img.Size)
					}
					rows = append(rows, []string{img.ID, img.Name, img.Status, size, img.DiskFormat, img.Visibility,
						fmt.Sprint(len(img.Locations))})
				}
				printTable(w, []string{"ID", "Name", "Status", "Size", "Disk Format", "Visibility", "Copies"}, rows)
			})
		}
	},
}).factory()

var imageShowCommand = (&spec{
	synopsis: "Show an image",
	args:     "[options] ID_OR_NAME",
	help:     "Show the details of an image, given its ID or its name (if no other image has it).",
	nargs:    exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			img, _, err := e.client.Images().Info(args[0], e.queryOptions())
			if err != nil {
				return e.fail("Error reading image %q: %v", args[0], err)
			}
			return e.render(img, func(w io.Writer) {
				vsize := "-"
				if img.VirtualSize > 0 {
					vsize = humanBytes(img.VirtualSize)
				}
				var holders []string
				for _, l := range img.Locations {
					holders = append(holders, l.NodeID)
				}
				sort.Strings(holders)
				printKV(w, []kv{
					{"ID", img.ID}, {"Name", img.Name}, {"Status", img.Status}, {"Visibility", img.Visibility},
					{"Owner", img.Owner}, {"Disk Format", img.DiskFormat}, {"Container Format", img.ContainerFormat},
					{"Size", fmt.Sprint(img.Size)}, {"Virtual Size", vsize}, {"Checksum (MD5)", img.Checksum},
					{"SHA-512", img.HashValue}, {"Min Disk (GB)", itoa(img.MinDisk)}, {"Min RAM (MB)", itoa(img.MinRAM)},
					{"Protected", btoa(img.Protected)}, {"Tags", strings.Join(img.Tags, ", ")},
					{"Stored On", strings.Join(holders, ", ")},
					{"Created", time.Unix(0, img.CreatedAt).UTC().Format(time.RFC3339)},
					{"Updated", time.Unix(0, img.UpdatedAt).UTC().Format(time.RFC3339)},
				})
				fmt.Fprint(w, "\nProperties\n")
				if len(img.Properties) == 0 {
					fmt.Fprintln(w, "<none>")
					return
				}
				printKV(w, mapKV(img.Properties))
			})
		}
	},
}).factory()

var imageDeleteCommand = (&spec{
	synopsis: "Delete images",
	args:     "[options] ID_OR_NAME [ID_OR_NAME...]",
	help: `Delete the given images. Every one is tried; the command fails if any
deletion failed. Protected images are refused. The servers remove the
data once no image names it.`,
	nargs: atLeast(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, refs []string) int {
			deleted, code := []string{}, 0
			for _, ref := range refs {
				if _, err := e.client.Images().Delete(ref); err != nil {
					code = e.fail("Error deleting image %q: %v", ref, err)
					continue
				}
				deleted = append(deleted, ref)
			}
			if rc := e.render(map[string][]string{"Deleted": deleted}, func(w io.Writer) {
				for _, ref := range deleted {
					fmt.Fprintf(w, "Image %q deleted\n", ref)
				}
			}); rc != 0 {
				return rc
			}
			return code
		}
	},
}).factory()

var imageDownloadCommand = (&spec{
	synopsis: "Download an image's data",
	args:     "[options] ID_OR_NAME",
	help: `Download an image's data to a file (-file), or to standard output when
it is not a terminal. The data's MD5 is checked against the image's
checksum as it arrives; a file that does not match is removed. A
progress bar is shown on a terminal.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		file := fs.String("file", "", "Write the data to `PATH` instead of standard output.")
		return func(e *env, args []string) int {
			var out io.Writer = e.ui.Stdout
			if *file == "" && isTerminal(e.ui.Stdout) {
				return e.fail("Error: refusing to write image data to a terminal; use -file or redirect the output")
			}
			data, err := e.client.Images().Download(args[0])
			if err != nil {
				return e.fail("Error downloading image %q: %v", args[0], err)
			}
			defer data.Close()
			var f *os.File
			if *file != "" {
				if f, err = os.Create(*file); err != nil {
					return e.fail("Error creating %s: %v", *file, err)
				}
				out = f
			}
			p := newTransfer(e.ui.Stderr, "Downloading "+args[0], data.Size)
			h := md5.New()
			n, err := io.CopyBuffer(io.MultiWriter(out, h), p.reader(data), make([]byte, 1<<20))
			if err == nil && data.Size >= 0 && n != data.Size {
				err = fmt.Errorf("received %d of %d bytes", n, data.Size)
			}
			if sum := hex.EncodeToString(h.Sum(nil)); err == nil && data.MD5 != "" && sum != data.MD5 {
				err = fmt.Errorf("the data's MD5 %s does not match the image's checksum %s", sum, data.MD5)
			}
			if f != nil {
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					_ = os.Remove(*file)
				}
			}
			p.finish(err == nil)
			if err != nil {
				return e.fail("Error downloading image %q: %v", args[0], err)
			}
			return 0
		}
	},
}).factory()

// humanBytes renders a size as 1.5 GiB, 12.0 MiB, 512 B.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
