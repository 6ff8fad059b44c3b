package platform_test

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// TestSendFormReachesAServerAsItsParts: a real server's multipart reader
// reads back every field and file, with the file's name and type; a name
// holding quotes or a line break cannot end its header.
func TestSendFormReachesAServerAsItsParts(t *testing.T) {
	t.Parallel()
	type part struct{ field, name, typ, value string }
	var got []part
	var method, auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, auth = r.Method, r.Header.Get("Authorization")
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			b, _ := io.ReadAll(p)
			got = append(got, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(b)})
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	api := platform.API{Name: "Test API", BaseURL: srv.URL, Token: "tok"}
	parts := []platform.FormPart{
		platform.FieldPart("chat_id", "42"),
		{Field: "payload_json", Type: "application/json", Value: []byte(`{"content":"hi"}`)},
		platform.FilePart("files[0]", "a \"b\"\r\nX-Evil: 1.png", platform.Fetched{Bytes: []byte("\x89PNG\x00\x01"), MIME: "image/png"}),
		platform.FilePart("doc", "raw", platform.Fetched{Bytes: []byte("bytes")}),
	}
	resp, err := api.SendForm(t.Context(), http.MethodPatch, "/m", http.Header{"Authorization": {"Bot tok"}}, parts)
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("SendForm = %v, %v", resp, err)
	}
	want := []part{
		{"chat_id", "", "", "42"},
		{"payload_json", "", "application/json", `{"content":"hi"}`},
		{"files[0]", `a "b"X-Evil: 1.png`, "image/png", "\x89PNG\x00\x01"},
		{"doc", "raw", "application/octet-stream", "bytes"},
	}
	if method != http.MethodPatch || auth != "Bot tok" || len(got) != len(want) {
		t.Fatalf("%s %q: parts %q, want %q", method, auth, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("part %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestSendFormAndPostValuesRefuseWithoutCalling: the refusals SendJSON
// makes before anything is sent hold for every body.
func TestSendFormAndPostValuesRefuseWithoutCalling(t *testing.T) {
	t.Parallel()
	for name, api := range map[string]platform.API{
		"no token":    {Name: "Test API", BaseURL: "http://127.0.0.1:1"},
		"no base URL": {Name: "Test API", BaseURL: "not a url", Token: "tok"},
	} {
		_, err := api.SendForm(t.Context(), http.MethodPost, "/m", nil, nil)
		if message.ClassOf(err) != message.FailAuth {
			t.Errorf("%s: SendForm = %v, want auth", name, err)
		}
		_, err = api.PostValues(t.Context(), "/m", nil, url.Values{"a": {"b"}})
		if message.ClassOf(err) != message.FailAuth {
			t.Errorf("%s: PostValues = %v, want auth", name, err)
		}
	}
}

// TestFileName: the agent's name, its URL's last segment, or the kind,
// with the bytes' usual extension when the name has none.
func TestFileName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f         platform.MediaFile
		typ, want string
	}{
		{platform.MediaFile{Kind: message.MediaFile, Name: "report.pdf"}, "application/pdf", "report.pdf"},
		{platform.MediaFile{Kind: message.MediaFile, Name: "report"}, "application/pdf", "report.pdf"},
		{platform.MediaFile{Kind: message.MediaImage, URL: "https://example.com/c/chart.png?x=1"}, "image/png", "chart.png"},
		{platform.MediaFile{Kind: message.MediaImage, URL: "https://s3.example/out/abc?X-Amz=1", Upload: true}, "image/jpeg", "image.jpg"},
		{platform.MediaFile{Kind: message.MediaVoice, URL: "https://example.com/"}, "audio/ogg", "voice.ogg"},
		{platform.MediaFile{Kind: message.MediaAudio}, "audio/mpeg", "audio.mp3"},
		{platform.MediaFile{Kind: message.MediaFile}, "application/x-unknown-thing", "file"},
		{platform.MediaFile{Kind: message.MediaFile}, "", "file"},
	} {
		if got := c.f.FileName(c.typ); got != c.want {
			t.Errorf("FileName(%+v, %s) = %q, want %q", c.f, c.typ, got, c.want)
		}
	}
}
