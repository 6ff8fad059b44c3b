package fakeslack_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// webForm posts form args to a Web API method with the bot token, and
// decodes the answer.
func webForm(t *testing.T, root, method string, args url.Values) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, root+"/api/"+method, strings.NewReader(args.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func postBytes(t *testing.T, u, body string) int {
	t.Helper()
	resp, err := http.Post(u, "application/octet-stream", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestExternalUploadChecksWhatSlackChecks: the bytes must be as long as
// announced; a file is shared only once its bytes arrived, and only once;
// thread_ts must be a timestamp; the shared file is the delivery, in the
// thread, with its caption.
func TestExternalUploadChecksWhatSlackChecks(t *testing.T) {
	t.Parallel()
	rec, srv := setup(t)
	if got := webForm(t, srv.URL, "files.getUploadURLExternal", url.Values{"filename": {"a.txt"}}); got["error"] != "invalid_arguments" {
		t.Fatalf("no length: %v", got)
	}
	up := webForm(t, srv.URL, "files.getUploadURLExternal", url.Values{"filename": {"a.txt"}, "length": {"5"}})
	id, target := up["file_id"].(string), up["upload_url"].(string)
	if id == "" || !strings.HasPrefix(target, srv.URL+"/upload/v1/") {
		t.Fatalf("getUploadURLExternal = %v", up)
	}
	share := func(thread string) map[string]any {
		return webForm(t, srv.URL, "files.completeUploadExternal", url.Values{
			"files": {`[{"id":"` + id + `","title":"a.txt"}]`}, "channel_id": {"C0CHAN0001"}, "thread_ts": {thread}, "initial_comment": {"the file"}})
	}
	if got := share("1764432000.000100"); got["error"] != "file_not_found" {
		t.Fatalf("shared before its bytes arrived: %v", got)
	}
	if code := postBytes(t, target, "abc"); code != http.StatusBadRequest {
		t.Fatalf("3 bytes for 5 announced: %d", code)
	}
	if code := postBytes(t, target, "hello"); code != http.StatusOK {
		t.Fatalf("the bytes: %d", code)
	}
	if got := share("yesterday"); got["error"] != "invalid_arguments" {
		t.Fatalf("thread_ts that is no timestamp: %v", got)
	}
	if got := share("1764432000.000100"); got["ok"] != true {
		t.Fatalf("complete: %v", got)
	}
	if got := share("1764432000.000100"); got["error"] != "file_not_found" {
		t.Fatalf("completed twice: %v", got)
	}
	ds := rec.Delivered()
	if len(ds) != 1 || ds[0].Thread != "1764432000.000100" || ds[0].Text != "the file" || ds[0].Chat != "C0CHAN0001" {
		t.Fatalf("deliveries %+v, want the one file in its thread", ds)
	}
}
