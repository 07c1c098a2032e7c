package command

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	groups["s3"] = "Manage access to the S3 object store"
	groups["s3 credentials"] = "Manage EC2 credentials (access keys) for the S3 API"
	register("s3 credentials create", s3CredentialCreateCommand)
	register("s3 credentials list", s3CredentialListCommand)
	register("s3 credentials delete", s3CredentialDeleteCommand)
}

var s3CredentialCreateCommand = (&spec{
	synopsis: "Issue an access key and secret for the S3 API",
	args:     "[options] -user USER -project PROJECT",
	help: `Issue an EC2-style credential to USER for PROJECT (each an id or a name),
as Keystone's OS-EC2 API does. S3 clients sign requests with the access
key and the secret (AWS Signature Version 4) and act as the user on the
project: its buckets and objects. The secret is shown once here and
again by list.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		user := fs.String("user", "", "The user, by `ID` or name.")
		project := fs.String("project", "", "The project, by `ID` or name.")
		return func(e *env, _ []string) int {
			if *user == "" || *project == "" {
				return e.usage("both -user and -project are required")
			}
			c, _, err := e.client.S3().CreateCredential(*user, *project)
			if err != nil {
				return e.fail("Error creating credential: %v", err)
			}
			return e.render(c, func(w io.Writer) {
				fmt.Fprintf(w, "Access key: %s\nSecret:     %s\n", c.Access, c.Secret)
			})
		}
	},
}).factory()

var s3CredentialListCommand = (&spec{
	synopsis: "List a user's S3 access keys",
	args:     "[options] -user USER",
	help:     "List the EC2 credentials of USER (an id or a name).",
	nargs:    exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		user := fs.String("user", "", "The user, by `ID` or name.")
		return func(e *env, _ []string) int {
			if *user == "" {
				return e.usage("-user is required")
			}
			creds, err := e.client.S3().Credentials(*user, e.queryOptions())
			if err != nil {
				return e.fail("Error listing credentials: %v", err)
			}
			if creds == nil {
				creds = []*api.EC2Credential{}
			}
			return e.render(creds, func(w io.Writer) {
				if len(creds) == 0 {
					fmt.Fprintln(w, "No credentials found")
					return
				}
				rows := make([][]string, 0, len(creds))
				for _, c := range creds {
					rows = append(rows, []string{c.Access, c.Secret, c.ProjectID, time.Unix(0, c.CreatedAt).UTC().Format(time.RFC3339)})
				}
				printTable(w, []string{"Access Key", "Secret", "Project", "Created"}, rows)
			})
		}
	},
}).factory()

var s3CredentialDeleteCommand = (&spec{
	synopsis: "Delete an S3 access key",
	args:     "[options] ACCESS_KEY",
	help:     "Delete the EC2 credential with the access key ACCESS_KEY; requests signed with it fail from then on.",
	nargs:    exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			if _, err := e.client.S3().DeleteCredential(args[0]); err != nil {
				return e.fail("Error deleting credential: %v", err)
			}
			return e.render(map[string]string{"Deleted": args[0]}, func(w io.Writer) {
				fmt.Fprintf(w, "Credential %s deleted\n", args[0])
			})
		}
	},
}).factory()

// imageFromS3 makes an image of an S3 object (image create -from-s3).
func imageFromS3(e *env, img *api.Image, file, source string) int {
	if file != "" {
		return e.usage("-file and -from-s3 exclude each other")
	}
	bucket, key, ok := strings.Cut(source, "/")
	if !ok || bucket == "" || key == "" {
		return e.usage("-from-s3 takes BUCKET/KEY")
	}
	if img.DiskFormat == "" {
		img.DiskFormat = "raw"
	}
	out, _, err := e.client.S3().ImportImage(bucket, key, img)
	if err != nil {
		return e.fail("Error creating image from s3://%s: %v", source, err)
	}
	return e.render(out, func(w io.Writer) {
		fmt.Fprintf(w, "Image %q created with ID %q from s3://%s: %s, MD5 %s\n", out.Name, out.ID, source, humanBytes(out.Size), out.Checksum)
	})
}
