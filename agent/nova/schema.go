package nova

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// jsonType is a set of JSON types a value may have.
type jsonType uint8

const (
	tString jsonType = 1 << iota
	tInteger
	tNumber
	tBoolean
	tObject
	tArray
	tNull
)

var typeNames = []struct {
	t    jsonType
	name string
}{{tString, "string"}, {tInteger, "integer"}, {tNumber, "number"}, {tBoolean, "boolean"},
	{tObject, "object"}, {tArray, "array"}, {tNull, "null"}}

// schema is the subset of JSON Schema that Nova's request schemas use,
// so bodies are validated and refused with Nova's messages
// ("Invalid input for field/attribute name. Value: …. … is too long").
type schema struct {
	types jsonType
	// Objects.
	props    map[string]*schema
	required []string
	// open allows properties not in props; extra (when set) validates
	// them, as for metadata maps.
	open  bool
	extra *schema
	// keys, when set, is the pattern every property not in props must
	// match (JSON Schema's patternProperties with no other properties).
	keys *regexp.Regexp
	// Strings.
	minLen, maxLen int // maxLen 0: unbounded
	pattern        *regexp.Regexp
	enum           []string
	// format checks a string; it returns a message, "" when valid.
	format func(string) string
	// Numbers, and integers given as strings.
	min, max     *float64
	exclusiveMin bool
	// Arrays.
	items              *schema
	minItems, maxItems int // maxItems 0: unbounded
}

func ptr(f float64) *float64 { return &f }

// Reusable schemas, as Nova's parameter_types.
var (
	nameSchema         = &schema{types: tString, minLen: 1, maxLen: 255, format: checkName}
	descriptionSchema  = &schema{types: tString | tNull, maxLen: 255, format: checkPrintableOrEmpty}
	booleanSchema      = &schema{types: tBoolean | tString, enum: boolStrings}
	metadataSchema     = &schema{types: tObject, open: true, keys: metadataKeyPattern, extra: &schema{types: tString, maxLen: 255}}
	positiveIntSchema  = intSchema(1, math.MaxInt32)
	nonNegativeInt     = intSchema(0, math.MaxInt32)
	uuidPattern        = regexp.MustCompile(`^(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)
	digitsPattern      = regexp.MustCompile(`^[0-9]*$`)
	metadataKeyPattern = regexp.MustCompile(`^[a-zA-Z0-9-_:. ]{1,255}$`)
)

// boolStrings are the values Nova's parameter_types.boolean accepts as
// strings (booleans themselves always pass).
var boolStrings = []string{"True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes", "y", "t",
	"False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no", "n", "f"}

// intSchema is Nova's integer-or-digit-string parameter with bounds.
func intSchema(min, max float64) *schema {
	return &schema{types: tInteger | tString, pattern: digitsPattern, minLen: 1, min: ptr(min), max: ptr(max)}
}

// validationError is Nova's 400 for a body that fails its schema.
func validationError(path []string, value any, msg string) error {
	if len(path) == 0 {
		return badRequest("%s", msg)
	}
	return badRequest("Invalid input for field/attribute %s. Value: %s. %s", path[len(path)-1], pyStr(value), msg)
}

// validate checks v against s, returning the first failure.
func (s *schema) validate(v any, path []string) error {
	t := typeOf(v)
	if s.types != 0 && s.types&t == 0 && !(t == tInteger && s.types&tNumber != 0) {
		return validationError(path, v, fmt.Sprintf("%s is not of type %s", pyRepr(v), s.typeList()))
	}
	switch t {
	case tObject:
		return s.validateObject(v.(map[string]any), path)
	case tArray:
		return s.validateArray(v.([]any), path)
	case tString:
		return s.validateString(v.(string), path)
	case tInteger, tNumber:
		f, _ := v.(json.Number).Float64()
		return s.validateNumber(v, f, path)
	case tBoolean:
		return nil
	}
	return nil
}

func (s *schema) validateObject(m map[string]any, path []string) error {
	for _, k := range s.required {
		if _, ok := m[k]; !ok {
			return validationError(path, m, fmt.Sprintf("'%s' is a required property", k))
		}
	}
	var unexpected []string
	for _, k := range sortedKeys(m) {
		sub, ok := s.props[k]
		if !ok && s.open {
			sub = s.extra
		}
		if !ok && (!s.open || s.keys != nil && !s.keys.MatchString(k)) {
			unexpected = append(unexpected, "'"+k+"'")
			continue
		}
		if sub != nil {
			if err := sub.validate(m[k], append(path, k)); err != nil {
				return err
			}
		}
	}
	if len(unexpected) > 0 {
		verb := "was"
		if len(unexpected) > 1 {
			verb = "were"
		}
		return validationError(path, m, fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", strings.Join(unexpected, ", "), verb))
	}
	return nil
}

func (s *schema) validateArray(a []any, path []string) error {
	if len(a) < s.minItems {
		return validationError(path, a, fmt.Sprintf("%s is too short", pyRepr(a)))
	}
	if s.maxItems > 0 && len(a) > s.maxItems {
		return validationError(path, a, fmt.Sprintf("%s is too long", pyRepr(a)))
	}
	if s.items != nil {
		for i, item := range a {
			if err := s.items.validate(item, append(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *schema) validateString(str string, path []string) error {
	n := len([]rune(str))
	switch {
	case n < s.minLen:
		return validationError(path, str, fmt.Sprintf("%s is too short", pyRepr(str)))
	case s.maxLen > 0 && n > s.maxLen:
		return validationError(path, str, fmt.Sprintf("%s is too long", pyRepr(str)))
	case s.pattern != nil && !s.pattern.MatchString(str):
		return validationError(path, str, fmt.Sprintf("%s does not match %s", pyRepr(str), pyRepr(s.pattern.String())))
	}
	if len(s.enum) > 0 && !containsString(s.enum, str) {
		return validationError(path, str, fmt.Sprintf("%s is not one of %s", pyRepr(str), pyRepr(anySlice(s.enum))))
	}
	if s.format != nil {
		if msg := s.format(str); msg != "" {
			return validationError(path, str, msg)
		}
	}
	// Bounds apply to integers given as digit strings once converted,
	// as Nova's validate_integer does.
	if s.min != nil && s.types&tString != 0 && s.pattern == digitsPattern && str != "" {
		f, err := strconv.ParseFloat(str, 64)
		if err == nil {
			return s.validateNumber(str, f, path)
		}
	}
	return nil
}

func (s *schema) validateNumber(v any, f float64, path []string) error {
	if s.min != nil && (f < *s.min || (s.exclusiveMin && f == *s.min)) {
		cmp := "less than"
		if s.exclusiveMin {
			cmp = "less than or equal to"
		}
		return validationError(path, v, fmt.Sprintf("%s is %s the minimum of %s", pyRepr(v), cmp, formatFloat(*s.min)))
	}
	if s.max != nil && f > *s.max {
		return validationError(path, v, fmt.Sprintf("%s is greater than the maximum of %s", pyRepr(v), formatFloat(*s.max)))
	}
	return nil
}

func (s *schema) typeList() string {
	var names []string
	for _, tn := range typeNames {
		if s.types&tn.t != 0 {
			names = append(names, "'"+tn.name+"'")
		}
	}
	return strings.Join(names, ", ")
}

// typeOf classifies a value decoded with UseNumber.
func typeOf(v any) jsonType {
	switch x := v.(type) {
	case nil:
		return tNull
	case string:
		return tString
	case bool:
		return tBoolean
	case map[string]any:
		return tObject
	case []any:
		return tArray
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return tInteger
		}
		return tNumber
	}
	return 0
}

// checkName is Nova's "name" format: printable, no leading or trailing
// whitespace.
func checkName(s string) string {
	if msg := checkPrintable(s); msg != "" {
		return msg
	}
	if strings.TrimSpace(s) != s {
		return "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace."
	}
	return ""
}

func checkPrintable(s string) string {
	if strings.TrimSpace(s) == "" {
		return "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace."
	}
	return checkPrintableOrEmpty(s)
}

func checkPrintableOrEmpty(s string) string {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return "An invalid 'name' value was provided. The name must be: printable characters."
		}
	}
	return ""
}

// checkUUID is Nova's "uuid" format.
func checkUUID(s string) string {
	if !uuidPattern.MatchString(s) {
		return pyRepr(s) + " is not a 'uuid'"
	}
	return ""
}

// pyRepr renders a value as Python's repr() does, for Nova's messages.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return "'" + strings.ReplaceAll(x, "'", `\'`) + "'"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return x.String()
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, pyRepr(k)+": "+pyRepr(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, pyRepr(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// pyStr renders a value as Python's str() does: strings bare.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

func formatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
