package nova

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// maxBody bounds a request body; Nova's user_data alone may be 64 KiB.
const maxBody = 1 << 20

// decodeBody reads the request's JSON body and validates it against s,
// answering as Nova does: 400 "Malformed request body" for bad JSON, 415
// for another content type, and the schema's messages. An absent body is
// JSON null.
func decodeBody(q *request, s *schema) (map[string]any, error) {
	data, err := io.ReadAll(http.MaxBytesReader(q.w, q.r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		return nil, badRequest("Malformed request body")
	}
	var v any
	if len(bytes.TrimSpace(data)) > 0 {
		if ct := q.r.Header.Get("Content-Type"); ct != "" {
			if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
				return nil, faultf(http.StatusUnsupportedMediaType, "Unsupported Content-Type")
			}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, badRequest("Malformed request body")
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, badRequest("Malformed request body")
		}
	}
	if q.legacy {
		s.relax(v)
	}
	if err := s.validate(v, nil); err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}

// relax drops the properties v's closed objects do not allow, as Nova's
// legacy v2 API does (_soft_validate_additional_properties), except
// where the object's keys follow a pattern (metadata), which still
// fail. (Where every property is unknown Nova keeps them unvalidated;
// handlers read only known ones, so dropping them answers the same.)
// Handlers that validate parts of a body themselves (server actions)
// do so strictly.
func (s *schema) relax(v any) {
	switch x := v.(type) {
	case map[string]any:
		if !s.open && s.keys == nil {
			for k := range x {
				if _, ok := s.props[k]; !ok {
					delete(x, k)
				}
			}
		}
		for k, sub := range s.props {
			if val, ok := x[k]; ok && sub != nil {
				sub.relax(val)
			}
		}
	case []any:
		if s.items != nil {
			for _, item := range x {
				s.items.relax(item)
			}
		}
	}
}

// object returns m[k] as an object, or nil.
func object(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

// stringOf returns m[k] as a string; ok is false when absent or null.
func stringOf(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

// intOf returns a validated integer (a JSON number or a digit string).
func intOf(v any) int64 {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			f, _ := x.Float64()
			return int64(f)
		}
		return n
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// floatOf returns a validated number (a JSON number or a numeric string).
func floatOf(v any) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

// boolOf returns a validated boolean (true/false or one of Nova's
// boolean strings).
func boolOf(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		b, _ := parseBool(x)
		return b
	}
	return false
}

// parseBool is oslo's strict bool_from_string.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	}
	return false, errors.New("Unrecognized value '" + s + "', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'")
}

// stringMap converts a validated string-valued object.
func stringMap(o map[string]any) map[string]string {
	if o == nil {
		return nil
	}
	out := make(map[string]string, len(o))
	for k, v := range o {
		out[k], _ = v.(string)
	}
	return out
}
