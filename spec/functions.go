package spec

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// maxFileSize bounds what file() reads.
const maxFileSize = 1 << 20

// functions are the functions a spec may call: most of HCL's standard
// library (as Terraform and Nomad offer them) and file(), which reads a
// file relative to the spec's directory.
func functions(readFile func(string) ([]byte, error), baseDir string) map[string]function.Function {
	return map[string]function.Function{
		// Numbers.
		"abs":      stdlib.AbsoluteFunc,
		"ceil":     stdlib.CeilFunc,
		"floor":    stdlib.FloorFunc,
		"log":      stdlib.LogFunc,
		"max":      stdlib.MaxFunc,
		"min":      stdlib.MinFunc,
		"parseint": stdlib.ParseIntFunc,
		"pow":      stdlib.PowFunc,
		"signum":   stdlib.SignumFunc,
		// Strings.
		"chomp":         stdlib.ChompFunc,
		"format":        stdlib.FormatFunc,
		"formatlist":    stdlib.FormatListFunc,
		"indent":        stdlib.IndentFunc,
		"join":          stdlib.JoinFunc,
		"lower":         stdlib.LowerFunc,
		"regex":         stdlib.RegexFunc,
		"regexall":      stdlib.RegexAllFunc,
		"regex_replace": stdlib.RegexReplaceFunc,
		"replace":       stdlib.ReplaceFunc,
		"split":         stdlib.SplitFunc,
		"strlen":        stdlib.StrlenFunc,
		"strrev":        stdlib.ReverseFunc,
		"substr":        stdlib.SubstrFunc,
		"title":         stdlib.TitleFunc,
		"trim":          stdlib.TrimFunc,
		"trimprefix":    stdlib.TrimPrefixFunc,
		"trimspace":     stdlib.TrimSpaceFunc,
		"trimsuffix":    stdlib.TrimSuffixFunc,
		"upper":         stdlib.UpperFunc,
		// Collections.
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"index":           stdlib.IndexFunc,
		"keys":            stdlib.KeysFunc,
		"length":          stdlib.LengthFunc,
		"lookup":          stdlib.LookupFunc,
		"merge":           stdlib.MergeFunc,
		"range":           stdlib.RangeFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,
		// Encodings.
		"base64decode": base64DecodeFunc,
		"base64encode": base64EncodeFunc,
		"csvdecode":    stdlib.CSVDecodeFunc,
		"jsondecode":   stdlib.JSONDecodeFunc,
		"jsonencode":   stdlib.JSONEncodeFunc,
		// Types.
		"tobool":   stdlib.MakeToFunc(cty.Bool),
		"tolist":   stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":    stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber": stdlib.MakeToFunc(cty.Number),
		"toset":    stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring": stdlib.MakeToFunc(cty.String),
		"can":      tryfunc.CanFunc,
		"try":      tryfunc.TryFunc,
		// Files.
		"file": fileFunc(readFile, baseDir),
	}
}

// fileFunc reads a UTF-8 file, relative to baseDir unless absolute.
func fileFunc(readFile func(string) ([]byte, error), baseDir string) function.Function {
	return function.New(&function.Spec{
		Description: "Reads a file's contents as a string.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			path := args[0].AsString()
			if !filepath.IsAbs(path) {
				path = filepath.Join(baseDir, path)
			}
			b, err := readFile(path)
			if err != nil {
				return cty.NilVal, fmt.Errorf("cannot read %s: %w", path, err)
			}
			if len(b) > maxFileSize {
				return cty.NilVal, fmt.Errorf("%s is %d bytes, more than the %d file() reads", path, len(b), maxFileSize)
			}
			if !utf8.Valid(b) {
				return cty.NilVal, fmt.Errorf("%s is not UTF-8 text; base64-encode binary data", path)
			}
			return cty.StringVal(string(b)), nil
		},
	})
}

var base64EncodeFunc = function.New(&function.Spec{
	Description: "Encodes a string in base64.",
	Params:      []function.Parameter{{Name: "str", Type: cty.String}},
	Type:        function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.StringVal(base64.StdEncoding.EncodeToString([]byte(args[0].AsString()))), nil
	},
})

var base64DecodeFunc = function.New(&function.Spec{
	Description: "Decodes a base64 string holding UTF-8 text.",
	Params:      []function.Parameter{{Name: "str", Type: cty.String}},
	Type:        function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		b, err := base64.StdEncoding.DecodeString(args[0].AsString())
		if err != nil {
			return cty.NilVal, fmt.Errorf("not valid base64: %w", err)
		}
		if !utf8.Valid(b) {
			return cty.NilVal, fmt.Errorf("the decoded bytes are not UTF-8 text")
		}
		return cty.StringVal(string(b)), nil
	},
})
