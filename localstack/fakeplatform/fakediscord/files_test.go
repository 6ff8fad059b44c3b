package fakediscord_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
)

// postForm posts a multipart channel message: payload (payload_json, when
// not nil) and files, by field name and filename.
func (s *setup) postForm(t *testing.T, payload any, files map[string][2]string) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if payload != nil {
		b, _ := json.Marshal(payload)
		_ = w.WriteField("payload_json", string(b))
	}
	for field, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+field+`"; filename="`+f[0]+`"`)
		p, _ := w.CreatePart(h)
		_, _ = p.Write([]byte(f[1]))
	}
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/channels/"+channel+"/messages", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bot "+fakediscord.BotToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestMultipartMessagesAsDiscordChecksThem: a message of a file alone is
// a message; a file over MaxUpload is 413 (40005); attachments must name
// files the form holds; a file part is files[n]; the file is recorded.
func TestMultipartMessagesAsDiscordChecksThem(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	att := func(id int) map[string]any {
		return map[string]any{"attachments": []map[string]any{{"id": id, "filename": "a.txt"}}}
	}
	if code, _ := s.postForm(t, att(0), map[string][2]string{"files[0]": {"a.txt", "hello"}}); code != http.StatusOK {
		t.Fatalf("a file alone: %d", code)
	}
	big := string(make([]byte, fakediscord.MaxUpload+1))
	if code, got := s.postForm(t, nil, map[string][2]string{"files[0]": {"big.bin", big}}); code != http.StatusRequestEntityTooLarge || got["code"] != 40005.0 {
		t.Fatalf("over MaxUpload: %d %v", code, got)
	}
	if code, got := s.postForm(t, att(1), map[string][2]string{"files[0]": {"a.txt", "hello"}}); code != http.StatusBadRequest || got["code"] != 50035.0 {
		t.Fatalf("an attachment naming no file: %d %v", code, got)
	}
	if code, got := s.postForm(t, nil, map[string][2]string{"file": {"a.txt", "hello"}}); code != http.StatusBadRequest || got["code"] != 50035.0 {
		t.Fatalf("a file part not named files[n]: %d %v", code, got)
	}
	if code, got := s.postForm(t, map[string]any{"content": ""}, nil); code != http.StatusBadRequest || got["code"] != 50006.0 {
		t.Fatalf("no content, no file: %d %v", code, got)
	}
	ds := s.rec.Delivered()
	if len(ds) != 1 || fakeapi.Str(ds[0].Args, fakeapi.ArgFileName) != "a.txt" || fakeapi.Str(ds[0].Args, fakeapi.ArgSize) != "5" {
		t.Fatalf("deliveries %+v, want the one file recorded", ds)
	}
}
