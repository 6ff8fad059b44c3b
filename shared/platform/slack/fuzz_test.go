package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// FuzzReceiverParse feeds any body and X-Slack-Signature through Verify, and
// the body through Parse: neither may panic, only the true signature is
// accepted, refusals wrap the ingress sentinels, and whatever parses is a
// reply alone, or well-formed events (a message with text; presses, one per
// action of an interactivity form) and ignored updates.
func FuzzReceiverParse(f *testing.F) {
	platformtest.AddSamples(f, eventsDir, "*", "v0=00")
	f.Add(callback(`{"type":"app_mention","user":"U1","text":"<@U0BOT00001|","ts":"1.2","channel":"D1"}`), "v0=")
	f.Add(callback(`{"type":"message","user":"U1","text":"<@U0BOT00001>\u00a0hi","ts":"99999999999999999999.9","channel":"C1"}`), "")
	f.Add([]byte(`{"type":"event_callback","team_id":"T","event":{}}`), "v1=ab")
	f.Add(callback(`{"type":"message","subtype":"file_share","user":"U1","text":"","ts":"1.2","channel":"C1","files":[{"id":"F1","mode":"hosted","subtype":"slack_audio","duration_ms":-9},{"mode":"hosted"},{"id":"F2","mode":"tombstone"}]}`), "")
	f.Add(interaction(`{"type":"block_actions","user":{"id":"U1","team_id":"T1"},"container":{"type":"message","message_ts":"1.1","channel_id":"D1","thread_ts":"1.1"},"actions":[{"value":"a","action_ts":"1.2"},{"action_ts":"1.3"},{"selected_option":{"value":"b"},"action_ts":"x"}]}`), "v0=")
	f.Add(interaction(`{"type":"block_actions","container":{"type":"view","view_id":"V1"}}`), "")
	f.Add([]byte(`payload=%7B%7D&payload=`), "v0=00")

	r := &Receiver{SigningSecret: testSecret}
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		req := signed(body, sampleNow, sampleNow)
		if err := r.Verify(req); err != nil {
			t.Fatalf("Verify refused a true signature: %v", err)
		}
		truth := req.Header.Get(SignatureHeader)
		req.Header.Set(SignatureHeader, sig)
		platformtest.CheckVerify(t, r.Verify(req), sig, strings.EqualFold(sig, truth), testSecret)

		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, platform.ErrMalformed) {
				t.Fatalf("Parse error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if p.Reply != nil {
			if p.Reply.Status != 200 || len(p.Reply.Body) == 0 || len(p.Events)+len(p.Ignored) > 0 {
				t.Fatalf("bad reply %+v", p)
			}
			return
		}
		if len(p.Events)+len(p.Ignored) == 0 {
			t.Fatalf("Parse = %+v: nothing parsed, nothing ignored", p)
		}
		answers := 0
		for _, ev := range p.Events {
			if ev.Account == "" || ev.Thread.Account != ev.Account || ev.Thread.Platform != message.Slack ||
				ev.Thread.Chat == "" || ev.Sender.ID == "" ||
				(ev.ChatType != message.ChatPrivate && ev.ChatType != message.ChatGroup) {
				t.Fatalf("bad event %+v", ev)
			}
			switch ev.Kind {
			case message.KindMessage:
				if (strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0) || ev.EventID != ev.Thread.Chat+":"+ev.MessageID || ev.MessageID == "" || ev.Press != nil {
					t.Fatalf("bad message %+v", ev)
				}
			case message.KindEdit, message.KindDelete:
				if ev.MessageID == "" || ev.Press != nil || ev.Reaction != nil {
					t.Fatalf("bad edit or deletion %+v", ev)
				}
			case message.KindReaction:
				if r := ev.Reaction; r == nil || r.MessageID == "" || r.Emoji == "" || ev.Text != "" {
					t.Fatalf("bad reaction %+v", ev)
				}
			case message.KindAnswer:
				answers++
				pr := ev.Press
				if pr == nil || pr.Data == "" || pr.MessageID == "" || ev.Text != "" ||
					!strings.HasPrefix(ev.EventID, ev.Thread.Chat+":"+pr.MessageID+":") || ev.Thread.Thread == pr.MessageID {
					t.Fatalf("bad answer %+v, press %+v", ev, pr)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
		}
		if (answers > 0) != (p.Within > 0) {
			t.Fatalf("%d presses, Within %s: Slack waits 3 s for the answer to a press", answers, p.Within)
		}
		platformtest.CheckIgnored(t, p.Ignored, platform.IgnoredBot, platform.IgnoredEdited, platform.IgnoredDeleted, platform.IgnoredNoText, platform.IgnoredUnsupported)
	})
}

// FuzzSendMediaAnswers feeds any answer of files.getUploadURLExternal
// (where {URL} stands for the test server's root) and of
// files.completeUploadExternal through SendMedia: it may not panic, every
// failure is a *message.SendError, and a success's receipt ends with the
// file id Slack named, after at most the ts the answer's shares name for
// the channel.
func FuzzSendMediaAnswers(f *testing.F) {
	f.Add(`{"ok":true,"file_id":"F1","upload_url":"{URL}/upload/v1/F1"}`, `{"ok":true,"files":[{"id":"F1","shares":{"public":{"C1":[{"ts":"1764432000.000100"}]}}}]}`)
	f.Add(`{"ok":true,"file_id":"F1","upload_url":"{URL}/upload/v1/F1"}`, `{"ok":true,"files":[{"id":"F1","shares":{}}]}`)
	f.Add(`{"ok":true,"file_id":"F1","upload_url":"{URL}/upload/v1/F1"}`, `{"ok":true,"files":[{"id":"F2","shares":{"private":{"C1":[{"ts":""},{"ts":"1.2"}]}}},null]}`)
	f.Add(`{"ok":true,"file_id":"","upload_url":"{URL}/upload/v1/F1"}`, `{"ok":true}`)
	f.Add(`{"ok":true,"file_id":"F1","upload_url":"https://files.slack.com.evil/x"}`, `{"ok":true}`)
	f.Add(`{"ok":false,"error":"file_uploads_disabled"}`, `{}`)
	f.Add(`{"ok":true,"file_id":"F1","upload_url":"{URL}/upload/v1/F1"}`, `{"ok":false,"error":"internal_error"}`)
	f.Add(`<html>`, `{"ok":true,"files":{"id":"F1"}}`)
	f.Fuzz(func(t *testing.T, upload, complete string) {
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			switch {
			case strings.HasSuffix(r.URL.Path, "/files.getUploadURLExternal"):
				_, _ = io.WriteString(w, strings.ReplaceAll(upload, "{URL}", srv.URL))
			case strings.HasSuffix(r.URL.Path, "/files.completeUploadExternal"):
				_, _ = io.WriteString(w, complete)
			case strings.HasPrefix(r.URL.Path, "/upload/"):
				_, _ = io.WriteString(w, "OK")
			default:
				_, _ = io.WriteString(w, `{"ok":true,"ts":"1764432000.000200"}`)
			}
		}))
		defer srv.Close()
		c := &Client{Token: testToken, BaseURL: srv.URL}
		m := message.Outgoing{Thread: message.Thread{Platform: message.Slack, Account: "T1", Chat: "C1"}}
		rc, err := c.SendMedia(t.Context(), m, platform.MediaFile{Kind: message.MediaFile, Name: "a.pdf",
			Fetch: func(context.Context, int64) (platform.Fetched, error) {
				return platform.Fetched{Bytes: []byte("%PDF")}, nil
			}})
		if err != nil {
			var se *message.SendError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *message.SendError", err)
			}
			return
		}
		var up SlackUploadURL
		_ = json.Unmarshal([]byte(strings.ReplaceAll(upload, "{URL}", srv.URL)), &up)
		ids := rc.MessageIDs
		if len(ids) == 0 || len(ids) > 2 || ids[len(ids)-1] != up.FileID || up.FileID == "" {
			t.Fatalf("receipt %v, want it to end with the file id %q", ids, up.FileID)
		}
		if len(ids) == 2 && (ids[0] == "" || !strings.Contains(complete, ids[0])) {
			t.Fatalf("receipt %v: a ts the answer does not name", ids)
		}
	})
}
