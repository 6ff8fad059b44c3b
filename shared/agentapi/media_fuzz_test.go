package agentapi_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/agentapi"
)

// FuzzParseUploadRequest: a POST /media body never panics the parser, and
// what it accepts is a lower-case type/subtype and a positive size.
// Seeds: testdata/fuzz/FuzzParseUploadRequest.
func FuzzParseUploadRequest(f *testing.F) {
	f.Add([]byte(`{"type":"image/png","size":10}`))
	f.Add([]byte(`{"type":"image/png; x=1","size":10,"name":"a"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := agentapi.ParseUploadRequest(body)
		if err != nil {
			return
		}
		if r.Size < 1 || strings.Count(r.Type, "/") != 1 || strings.ToLower(r.Type) != r.Type || strings.ContainsAny(r.Type, " ;") {
			t.Fatalf("accepted %q as %+v", body, r)
		}
	})
}
