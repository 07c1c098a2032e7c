package httpx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDecodeStrict(t *testing.T) {
	type body struct{ A int }
	for in, want := range map[string]error{
		`{"A":1}`:                            nil,
		``:                                   ErrEmptyBody,
		`{"A":1} {}`:                         ErrTrailingData,
		`{"B":1}`:                            errAny,
		`{"A":"x"}`:                          errAny,
		`{"A":`:                              errAny,
		strings.Repeat(" ", 100) + `{"A":1}`: errTooBig,
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(in))
		var b body
		err := DecodeStrict(httptest.NewRecorder(), r, 64, &b)
		var tooBig *http.MaxBytesError
		switch want {
		case nil:
			if err != nil || b.A != 1 {
				t.Errorf("%q: %v %+v", in, err, b)
			}
		case errAny:
			if err == nil || errors.Is(err, ErrEmptyBody) || errors.Is(err, ErrTrailingData) {
				t.Errorf("%q: %v", in, err)
			}
		case errTooBig:
			if !errors.As(err, &tooBig) {
				t.Errorf("%q: %v, want MaxBytesError", in, err)
			}
		default:
			if !errors.Is(err, want) {
				t.Errorf("%q: %v, want %v", in, err, want)
			}
		}
	}
}

var (
	errAny    = errors.New("any decode error")
	errTooBig = errors.New("too big")
)
