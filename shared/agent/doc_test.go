package agent_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// docCase is one request handed to a documented verify function, and what it
// must say.
type docCase struct {
	Name    string            `json:"name"`
	Secret  string            `json:"secret"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	want    string            // the turn id, or "REJECT"
}

// TestProtocolDocExamples runs the Python, Node and Go verification snippets
// of docs/agent-protocol.md against requests the real client signed, so the
// documentation cannot drift from the code. A language whose toolchain is not
// installed is skipped.
func TestProtocolDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs external interpreters")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agent-protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippet := func(lang string) string {
		m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindSubmatch(doc)
		if m == nil {
			t.Fatalf("docs/agent-protocol.md has no %s block", lang)
		}
		return string(m[1])
	}
	cases := docCases(t)

	run := func(t *testing.T, bin string, args []string, dir string) {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed", bin)
		}
		in, _ := json.Marshal(cases)
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(in)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(cases) {
			t.Fatalf("got %d lines for %d cases:\n%s", len(lines), len(cases), out)
		}
		for i, c := range cases {
			if lines[i] != c.want {
				t.Errorf("%s: snippet said %q, want %q", c.Name, lines[i], c.want)
			}
		}
	}

	t.Run("Python", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		src := snippet("python") + `
import json, sys
for c in json.load(sys.stdin):
    try:
        print(verify(c["secret"], c["headers"], c["body"].encode()))
    except Exception:
        print("REJECT")
`
		os.WriteFile(filepath.Join(dir, "verify.py"), []byte(src), 0o644)
		run(t, "python3", []string{"verify.py"}, dir)
	})
	t.Run("Node", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		src := snippet("js") + `
const cases = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
for (const c of cases) {
  try { console.log(verify(c.secret, c.headers, Buffer.from(c.body, "utf8"))); }
  catch { console.log("REJECT"); }
}
`
		os.WriteFile(filepath.Join(dir, "verify.js"), []byte(src), 0o644)
		run(t, "node", []string{"verify.js"}, dir)
	})
	t.Run("Go", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		src := `package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

` + snippet("go") + `
func main() {
	var cases []struct {
		Secret  string
		Headers map[string]string
		Body    string
	}
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.Headers {
			h.Set(k, v)
		}
		if id, err := verify(c.Secret, h, []byte(c.Body), time.Now()); err != nil {
			fmt.Println("REJECT")
		} else {
			fmt.Println(id)
		}
	}
}
`
		os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module docexample\n\ngo 1.26\n"), 0o644)
		run(t, "go", []string{"run", "."}, dir)
	})
}

// docCases signs real requests with the client: both secret forms, a
// rotation list, and the failures a verifier must catch.
func docCases(t *testing.T) []docCase {
	t.Helper()
	const whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	const plain = "a plain shared secret"
	capture := func(secret string, at time.Time, text string) docCase {
		got := make(chan docCase, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			got <- docCase{Secret: secret, Body: string(body), Headers: map[string]string{
				"webhook-id":        r.Header.Get("webhook-id"),
				"webhook-timestamp": r.Header.Get("webhook-timestamp"),
				"webhook-signature": r.Header.Get("webhook-signature"),
			}}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer srv.Close()
		c := &agent.Client{URL: srv.URL, Secret: mustSecret(t, secret), HTTP: srv.Client(), Now: func() time.Time { return at }}
		req := turn(text)
		if _, err := c.Call(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		dc := <-got
		dc.want = req.TurnID
		return dc
	}
	now := time.Now()
	var cases []docCase
	add := func(name string, c docCase, want string) {
		c.Name = name
		if want != "" {
			c.want = want
		}
		cases = append(cases, c)
	}
	add("WhsecValid", capture(whsec, now, "héllo ✈️ | \"quoted\""), "")
	add("PlainValid", capture(plain, now, "hello"), "")
	rotated := capture(whsec, now, "rotation")
	old := standardwebhooks.Sign(mustSecret(t, "the old secret"), rotated.Headers["webhook-id"], now, []byte(rotated.Body))
	rotated.Headers["webhook-signature"] = old + " " + rotated.Headers["webhook-signature"]
	add("RotationList", rotated, "")
	tampered := capture(whsec, now, "pay 10")
	tampered.Body = strings.Replace(tampered.Body, "pay 10", "pay 99", 1)
	add("TamperedBody", tampered, "REJECT")
	wrong := capture(plain, now, "hello")
	wrong.Secret = "another secret"
	add("WrongSecret", wrong, "REJECT")
	add("Stale", capture(whsec, now.Add(-6*time.Minute), "old"), "REJECT")
	add("FromTheFuture", capture(whsec, now.Add(6*time.Minute), "new"), "REJECT")
	return cases
}
