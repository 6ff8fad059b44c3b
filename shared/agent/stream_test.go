package agent_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parleyhq/parley/shared/agent"
)

// collect returns a PreviewFunc that keeps what it is given.
func collect() (agent.PreviewFunc, *[]string) {
	var got []string
	return func(ev agent.StreamEvent) { got = append(got, ev.Type+":"+*ev.Text) }, &got
}

func TestReadStream(t *testing.T) {
	cases := map[string]struct {
		stream  string
		ctype   string
		body    string
		preview []string
		err     error
	}{
		"EnvelopeFinal": {
			stream:  "{\"type\":\"status\",\"text\":\"searching…\"}\n{\"type\":\"delta\",\"text\":\"your \"}\r\n\n{\"type\":\"delta\",\"text\":\"flight\"}\n{\"type\":\"final\",\"envelope\":{\"schema\":\"openab.turn.v1\",\"messages\":[{\"id\":\"a\",\"text\":\"your flight\"}]}}\n",
			ctype:   "application/json",
			body:    `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"your flight"}]}`,
			preview: []string{"status:searching…", "delta:your ", "delta:flight"},
		},
		"TextFinalWithoutNewline": {stream: `{"type":"final","text":"hi"}`, ctype: "text/plain", body: "hi"},
		"StatusCleared":           {stream: "{\"type\":\"status\",\"text\":\"\"}\n{\"type\":\"final\",\"text\":\"\"}", ctype: "text/plain", preview: []string{"status:"}},
		"LinesAfterFinalUnread":   {stream: "{\"type\":\"final\",\"text\":\"x\"}\nnot json", ctype: "text/plain", body: "x"},
		"NoFinal":                 {stream: "{\"type\":\"delta\",\"text\":\"a\"}\n", err: agent.ErrStream, preview: []string{"delta:a"}},
		"Empty":                   {stream: "", err: agent.ErrStream},
		"MalformedLine":           {stream: "{\"type\":\"delta\",\"text\":\"a\"}\n{\"type\":\n", err: agent.ErrStream, preview: []string{"delta:a"}},
		"UnknownType":             {stream: `{"type":"thought","text":"a"}`, err: agent.ErrStream},
		"UnknownMember":           {stream: `{"type":"delta","text":"a","x":1}`, err: agent.ErrStream},
		"TwoValuesOnALine":        {stream: `{"type":"final","text":"a"} {"type":"final","text":"b"}`, err: agent.ErrStream},
		"EmptyDelta":              {stream: `{"type":"delta","text":""}`, err: agent.ErrStream},
		"DeltaWithEnvelope":       {stream: `{"type":"delta","text":"a","envelope":{}}`, err: agent.ErrStream},
		"FinalWithBoth":           {stream: `{"type":"final","text":"a","envelope":{}}`, err: agent.ErrStream},
		"FinalWithNeither":        {stream: `{"type":"final"}`, err: agent.ErrStream},
		"FinalEnvelopeNotObject":  {stream: `{"type":"final","envelope":"{}"}`, err: agent.ErrStream},
		"FinalEnvelopeNull":       {stream: `{"type":"final","envelope":null}`, err: agent.ErrStream},
		"LineTooLong":             {stream: `{"type":"delta","text":"` + strings.Repeat("a", 200) + `"}`, err: agent.ErrReplyTooLarge},
		"StreamTooLong":           {stream: strings.Repeat("{\"type\":\"delta\",\"text\":\"abc\"}\n", 40), err: agent.ErrReplyTooLarge},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			preview, got := collect()
			reply, err := agent.ReadStream(strings.NewReader(c.stream), 128, 1000, preview)
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if err == nil && (reply.ContentType != c.ctype || string(reply.Body) != c.body || reply.Status != 200) {
				t.Fatalf("reply %d %q %q, want %q %q", reply.Status, reply.ContentType, reply.Body, c.ctype, c.body)
			}
			if strings.Join(*got, "|") != strings.Join(c.preview, "|") && !(name == "StreamTooLong") {
				t.Fatalf("previewed %q, want %q", *got, c.preview)
			}
		})
	}
}

// A streamed reply's deltas reach the preview while the agent is still
// writing, and its final is the reply a body would have been.
func TestClientStreamsPreviewsBeforeTheFinal(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
		_, _ = w.Write([]byte("{\"type\":\"delta\",\"text\":\"hel\"}\n"))
		w.(http.Flusher).Flush()
		<-release
		_, _ = w.Write([]byte("{\"type\":\"final\",\"envelope\":{\"schema\":\"openab.turn.v1\",\"messages\":[{\"id\":\"a\",\"text\":\"hello\"}]}}\n"))
	}))
	defer srv.Close()
	c := &agent.Client{URL: srv.URL, Secret: mustSecret(t, testSecret)}
	seen := make(chan string, 4)
	reply, err := c.Stream(context.Background(), turn("hi"), func(ev agent.StreamEvent) {
		seen <- *ev.Text
		close(release) // the final is written only once the delta was seen
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := <-seen; d != "hel" {
		t.Fatalf("delta %q", d)
	}
	if reply.ContentType != "application/json" || !bytes.Contains(reply.Body, []byte(`"hello"`)) {
		t.Fatalf("reply %q %s", reply.ContentType, reply.Body)
	}
}

// A bad stream fails like a bad body: permanently, naming no content.
func TestClientBadStreamIsPermanent(t *testing.T) {
	for name, body := range map[string]string{
		"NoFinal":  "{\"type\":\"delta\",\"text\":\"" + userText + "\"}\n",
		"Garbage":  userText,
		"Oversize": "{\"type\":\"delta\",\"text\":\"" + strings.Repeat("x", 300) + "\"}\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", agent.StreamType)
				_, _ = w.Write([]byte(body))
			}))
			defer srv.Close()
			c := &agent.Client{URL: srv.URL, Secret: mustSecret(t, testSecret), MaxReplyBytes: 256}
			_, err := c.Call(context.Background(), turn("hi"))
			var ae *agent.Error
			if !errors.As(err, &ae) || ae.Kind != agent.KindPermanent || ae.Status != 200 {
				t.Fatalf("error %v, want a permanent agent error", err)
			}
			if strings.Contains(err.Error(), userText) {
				t.Fatalf("the error quotes the stream: %v", err)
			}
		})
	}
}

// A stream cut off by the call's timeout is a transient timeout, never a
// stream "without a final".
func TestClientStreamTimeoutIsTransient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", agent.StreamType)
		_, _ = w.Write([]byte("{\"type\":\"delta\",\"text\":\"a\"}\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := &agent.Client{URL: srv.URL, Secret: mustSecret(t, testSecret), Timeout: 200 * time.Millisecond}
	_, err := c.Call(context.Background(), turn("hi"))
	var ae *agent.Error
	if !errors.As(err, &ae) || ae.Kind != agent.KindTransient || !errors.Is(err, agent.ErrTimeout) {
		t.Fatalf("error %v, want a transient timeout", err)
	}
}

// The built-in echo agent's /stream previews in process as it writes: a
// status line, "echo:" and each word, then two bubbles.
func TestEchoStream(t *testing.T) {
	c := &agent.Client{URL: agent.BuiltinEcho, Secret: mustSecret(t, testSecret)}
	preview, got := collect()
	start := time.Now()
	reply, err := c.Stream(context.Background(), turn("/stream  your flight   moved"), preview)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"status:thinking…", "delta:echo:", "delta: your", "delta: flight", "delta: moved"}
	if strings.Join(*got, "|") != strings.Join(want, "|") {
		t.Fatalf("previewed %q, want %q", *got, want)
	}
	env := decodeEnvelope(t, reply.Body)
	if len(env.Messages) != 2 || env.Messages[0].Text != "echo: your flight moved" || env.Messages[1].Text != "streamed in 4 deltas" {
		t.Fatalf("final %+v", env)
	}
	if d := time.Since(start); d < 5*300*time.Millisecond {
		t.Fatalf("the stream took %s: its lines were not paced", d)
	}
	// Without a preview function the stream is read all the same.
	if reply, err = c.Call(context.Background(), turn("/stream")); err != nil || !bytes.Contains(reply.Body, []byte("echo: ")) {
		t.Fatalf("call: %v %s", err, reply.Body)
	}
}

// streamSchema describes, for agent authors, one line of a streamed reply.
const (
	streamSchema   = "../../docs/schema/parley.stream.v1.json"
	streamFixtures = "../../docs/fixtures/stream"
)

// The stream fixtures and the schema agree with ReadStream: every ok-*
// fixture is read, and each line validates; every bad-* one is refused, and
// the schema refuses a line of it too, except a stream with no final, which
// no line shows.
func TestStreamFixturesAgreeWithSchema(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile(streamSchema)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(streamFixtures)
	if err != nil || len(entries) == 0 {
		t.Fatalf("fixtures: %v", err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(streamFixtures, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			_, rerr := agent.ReadStream(bytes.NewReader(b), agent.DefaultMaxReplyBytes, agent.DefaultMaxStreamBytes, nil)
			schemaOK := true
			for line := range bytes.Lines(b) {
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
				if err != nil || sch.Validate(inst) != nil {
					schemaOK = false
				}
			}
			switch ok := strings.HasPrefix(e.Name(), "ok-"); {
			case ok && (rerr != nil || !schemaOK):
				t.Fatalf("read: %v, schema ok: %t", rerr, schemaOK)
			case !ok && rerr == nil:
				t.Fatal("a bad stream was read")
			case !ok && schemaOK && e.Name() != "bad-no-final.ndjson":
				t.Fatal("the schema accepts every line of a bad stream")
			}
		})
	}
}
