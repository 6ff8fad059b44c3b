package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/localstate"
	"github.com/parleyhq/parley/localstack/syncbuf"
)

// TestMakeRun is make run, end to end: the banner, a sample posted the way
// the README says, its bubbles printed by the fake platform, a duplicate
// answered as such, and a clean stop that leaves no emulator behind.
func TestMakeRun(t *testing.T) {
	out := &syncbuf.Buffer{}
	env := map[string]string{
		"PARLEY_LISTEN":       "127.0.0.1:0",
		"PARLEY_LOCAL_LOG":    filepath.Join(t.TempDir(), "parley-local.log"),
		"PARLEY_BUBBLE_DELAY": "300ms",
	}
	getenv := func(k string) string { return env[k] }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, out, getenv, func(addr string) { addrc <- addr }) }()

	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run ended before it was ready: %v\n%s", err, out)
	case <-time.After(90 * time.Second):
		t.Fatalf("not ready after 90 s:\n%s", out)
	}
	for _, want := range []string{"Parley is running locally.", "http://" + addr + "/telegram", "X-Telegram-Bot-Api-Secret-Token: parley-telegram-test-secret", `events/telegram/message.json)"`} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("banner lacks %q:\n%s", want, out)
		}
	}

	// parley --local finds this run where make run says it is.
	st, err := localstate.Read(filepath.Join(filepath.Dir(env["PARLEY_LOCAL_LOG"]), "local.json"))
	if err != nil || st.Listen != addr || st.Log != env["PARLEY_LOCAL_LOG"] || st.Getenv("PARLEY_TABLE") == "" || st.Getenv("AWS_ENDPOINT_URL_SQS") == "" {
		t.Fatalf("local state %+v, %v: want this run's address, log, table and emulators", st, err)
	}

	env["PARLEY_LISTEN"] = addr
	sample := filepath.Join("..", "..", "..", "events", "telegram", "message.json")
	var ack syncbuf.Buffer
	if err := post(ctx, &ack, getenv, []string{sample}); err != nil {
		t.Fatalf("post: %v", err)
	}
	if !strings.Contains(ack.String(), "Parley-Ack: durable") || !strings.Contains(ack.String(), `"enqueued"`) {
		t.Fatalf("post answered:\n%s", ack.String())
	}
	want := []string{
		"telegram chat=42 | echo: what's the weather in Lisbon tomorrow?",
		"telegram chat=42 | 38 characters, via telegram",
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), want[1]) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	got := out.String()
	first, second := strings.Index(got, want[0]), strings.Index(got, want[1])
	if first < 0 || second < first {
		t.Fatalf("bubbles missing or out of order:\n%s", got)
	}

	// A sample with a file, on every platform that takes files: the fake
	// serves its bytes, and the echo agent describes what it got.
	for _, c := range []struct{ sample, want string }{
		{"telegram/voice.json", "telegram chat=42 | voice 0: audio/ogg, 2062 bytes, 4 s, sha256 "},
		{"slack/file-share.json", "slack chat=D0DM000001 | voice 1: audio/webm, 2062 bytes, 3 s,"},
		{"discord/command-file.json", "discord chat=1309000000000000300 | file 0: application/pdf,"},
		{"line/files.json", "line chat=Uada00000000000000000000000000042 | voice 0: audio/mp4, 2084 bytes, 4 s, sha256 "},
		{"whatsapp/media.json", "whatsapp chat=15551230001 | voice 0: audio/ogg, 2062 bytes, sha256 "},
		{"teams/file-personal.json", "teams chat=a:1personal0ada00000000000000000000000000000000000000000000000000001 | image 1: image/jpeg, 4116 bytes, sha256 "},
		{"googlechat/file-dm.json", "googlechat chat=spaces/dmAda0000001 | file 0: application/pdf, 110 bytes, \"boarding-pass.pdf\","},
	} {
		sample, want := c.sample, c.want
		var fileAck syncbuf.Buffer
		if err := post(ctx, &fileAck, getenv, []string{filepath.Join("..", "..", "..", "events", sample)}); err != nil {
			t.Fatalf("post %s: %v\n%s", sample, err, fileAck.String())
		}
		for !strings.Contains(out.String(), want) && time.Now().Before(deadline.Add(30*time.Second)) {
			time.Sleep(100 * time.Millisecond)
		}
		if !strings.Contains(out.String(), want) {
			t.Fatalf("%s: no bubble %q:\n%s", sample, want, out)
		}
	}

	// A proactive event, signed the Standard Webhooks way, reaches the agent
	// through triage and comes back as bubbles in its target chat.
	var evAck syncbuf.Buffer
	if err := post(ctx, &evAck, getenv, []string{filepath.Join("..", "..", "..", "events", "events", "alert.json")}); err != nil {
		t.Fatalf("post alert: %v\n%s", err, evAck.String())
	}
	for !strings.Contains(out.String(), "chat=-1001000000001 | echo: FIRING: DiskAlmostFull") && time.Now().Before(deadline.Add(30*time.Second)) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "chat=-1001000000001 | echo: FIRING: DiskAlmostFull") {
		t.Fatalf("the proactive event's reply never came:\n%s", out)
	}

	// A question: printed with its buttons and the command that presses
	// one; pressing it edits the question and brings the agent's answer.
	askFile := filepath.Join(t.TempDir(), "ask.json")
	ask := `{"update_id":900000777,"message":{"message_id":777,"date":1764432000,"text":"/ask seat",` +
		`"from":{"id":42,"is_bot":false,"first_name":"Ada"},"chat":{"id":42,"type":"private","first_name":"Ada"}}}`
	if err := os.WriteFile(askFile, []byte(ask), 0o600); err != nil {
		t.Fatal(err)
	}
	var askAck syncbuf.Buffer
	if err := post(ctx, &askAck, getenv, []string{askFile, "telegram"}); err != nil {
		t.Fatalf("post /ask: %v\n%s", err, askAck.String())
	}
	var pressLine string
	for pressLine == "" && time.Now().Before(deadline.Add(60*time.Second)) {
		for _, l := range strings.Split(out.String(), "\n") {
			if i := strings.Index(l, "press: go run ./localstack/cmd/parley-local press telegram 42 "); i >= 0 && pressLine == "" {
				pressLine = strings.TrimSpace(l[i:])
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "[ Window ]") || pressLine == "" {
		t.Fatalf("the question was not printed with its buttons and a press command:\n%s", out)
	}
	fields := strings.Fields(strings.TrimPrefix(pressLine, "press: go run ./localstack/cmd/parley-local press "))
	fields[len(fields)-1] = strings.Trim(fields[len(fields)-1], "'")
	var pressAck syncbuf.Buffer
	if err := press(ctx, &pressAck, getenv, fields); err != nil || !strings.Contains(pressAck.String(), "Parley-Ack: durable") {
		t.Fatalf("press %v: %v\n%s", fields, err, pressAck.String())
	}
	for !strings.Contains(out.String(), "| answer accept to ") && time.Now().Before(deadline.Add(90*time.Second)) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "(edited) Your flight to Lisbon") || !strings.Contains(out.String(), "| answer accept to ") {
		t.Fatalf("the press was not answered:\n%s", out)
	}

	var dup syncbuf.Buffer
	if err := post(ctx, &dup, getenv, []string{sample}); err != nil || !strings.Contains(dup.String(), `"duplicate"`) {
		t.Fatalf("second post: %v\n%s", err, dup.String())
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop within 30 s of Ctrl-C")
	}
	if strings.Count(out.String(), "| echo: what's the weather") != 1 {
		t.Fatalf("the duplicate was delivered again:\n%s", out)
	}
}

// TestMakeRunWithYourOwnBots (findings 8.1 and 9.7): with a user's own bot
// token, make run exited at once (a demo GitHub target named the demo bot).
// Demo values that name the demo bot's chats are dropped with a notice, the
// runner starts and answers, and a webhook secret the user set is never
// printed.
func TestMakeRunWithYourOwnBots(t *testing.T) {
	out := &syncbuf.Buffer{}
	env := map[string]string{
		"PARLEY_LISTEN":           "127.0.0.1:0",
		"PARLEY_LOCAL_LOG":        filepath.Join(t.TempDir(), "parley-local.log"),
		"PARLEY_BUBBLE_DELAY":     "100ms",
		"TELEGRAM_BOT_TOKEN":      "5550001234:AAUsersOwnTokenNotTheDemoOne_98765",
		"TELEGRAM_WEBHOOK_SECRET": "my-own-webhook-secret-do-not-print",
		"SLACK_BOT_TOKEN":         "xoxb-users-own-workspace",
		"SLACK_SIGNING_SECRET":    "users-own-signing-secret",
	}
	getenv := func(k string) string { return env[k] }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, out, getenv, func(addr string) { addrc <- addr }) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run ended before it was ready: %v\n%s", err, out)
	case <-time.After(90 * time.Second):
		t.Fatalf("not ready after 90 s:\n%s", out)
	}
	banner := out.String()
	if strings.Contains(banner, env["TELEGRAM_WEBHOOK_SECRET"]) || !strings.Contains(banner, "<your TELEGRAM_WEBHOOK_SECRET>") {
		t.Fatalf("the banner prints the user's webhook secret, or no placeholder:\n%s", banner)
	}
	for _, want := range []string{`demo events source "cron" dropped`, `demo events source "ci" dropped`, `demo events source "github" dropped`} {
		if !strings.Contains(banner, want) {
			t.Fatalf("banner lacks the notice %q:\n%s", want, banner)
		}
	}
	env["PARLEY_LISTEN"] = addr
	var ack syncbuf.Buffer
	if err := post(ctx, &ack, getenv, []string{filepath.Join("..", "..", "..", "events", "telegram", "message.json")}); err != nil {
		t.Fatalf("post: %v\n%s", err, ack.String())
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "telegram chat=42 | 38 characters, via telegram") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "telegram chat=42 | echo: what's the weather in Lisbon tomorrow?") {
		t.Fatalf("no answer with the user's own bot:\n%s", out)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}
