package emulator

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/shared/resources"
)

func TestTailBufferKeepsLastBytesFromALineStart(t *testing.T) {
	b := &tailBuffer{max: 16}
	for _, s := range []string{"first line\n", "second line\n", "third\n"} {
		if _, err := b.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	// Kept: "d line\nthird\n" cut to start after the first newline.
	if got, want := b.String(), "third"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	short := &tailBuffer{max: 100}
	_, _ = short.Write([]byte("a\nb\n"))
	if got, want := short.String(), "a\nb"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

func TestLineWriterPrefixesEveryLine(t *testing.T) {
	var out bytes.Buffer
	w := &lineWriter{mu: &sync.Mutex{}, w: &out, prefix: []byte("sqs: ")}
	for _, s := range []string{"one\ntw", "o\n", "\nthree"} {
		n, err := w.Write([]byte(s))
		if err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got, want := out.String(), "sqs: one\nsqs: two\nsqs: \nsqs: three"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestLineWriterNeverFails(t *testing.T) {
	w := &lineWriter{mu: &sync.Mutex{}, w: failingWriter{}, prefix: []byte("x: ")}
	if n, err := w.Write([]byte("a\nb")); err != nil || n != 3 {
		t.Fatalf("Write = %d, %v; want 3, nil: a failing log must not stop the emulator's output copy", n, err)
	}
}

func TestListensOn(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if ok, err := listensOn(os.Getpid(), port); err != nil || !ok {
		t.Fatalf("listensOn(self, %d) = %v, %v; want true", port, ok, err)
	}
	other, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := listensOn(os.Getpid(), other); err != nil || ok {
		t.Fatalf("listensOn(self, free port %d) = %v, %v; want false", other, ok, err)
	}
	// Our parent (go test or a shell) does not hold our listener.
	if ok, _ := listensOn(os.Getppid(), port); ok {
		t.Fatalf("listensOn(parent, %d) = true; want false", port)
	}
}

func TestModuleRootFindsTheRepository(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "localstack", "_npm", "package.json")); err != nil {
		t.Fatalf("module root %s has no localstack/_npm/package.json: %v", root, err)
	}
}

func TestDeclaresModule(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		gomod string
		want  bool
	}{
		{"module github.com/parleyhq/parley\n\ngo 1.26\n", true},
		{"// comment\nmodule \"github.com/parleyhq/parley\" // quoted\n", true},
		{"module github.com/parleyhq/parley/infra\n", false},
		{"module github.com/parleyhq/parleyx\n", false},
		{"modulegithub.com/parleyhq/parley\n", false},
		{"go 1.26\n", false},
	} {
		path := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(path, []byte(tc.gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := declaresModule(path, modulePath); got != tc.want {
			t.Errorf("declaresModule(%q) = %v, want %v", tc.gomod, got, tc.want)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	longest := 0
	for _, q := range resources.Queues() {
		longest = max(longest, len(queueName("", q.DLQName())))
	}
	okLong := strings.Repeat("p", 80-longest)
	for _, p := range []string{"a", "dev", "Test_Foo-12", okLong} {
		if err := checkPrefix(p); err != nil {
			t.Errorf("checkPrefix(%q) = %v, want nil", p, err)
		}
		if n := len(queueName(p, resources.Outbound.DLQName())); n > 80 {
			t.Errorf("prefix %q gives an %d-character queue name", p, n)
		}
	}
	for _, p := range []string{"", "a.b", "a b", "ü", "a/b", okLong + "p"} {
		if err := checkPrefix(p); err == nil {
			t.Errorf("checkPrefix(%q) = nil, want an error", p)
		}
	}
}

func TestResourcesEnvNamesEveryDeclaredQueue(t *testing.T) {
	r := Resources{Table: "p-State", QueueURLs: map[string]string{}}
	for _, q := range resources.Queues() {
		r.QueueURLs[q.Name] = "url-of-" + q.Name
		r.QueueURLs[q.DLQName()] = "url-of-" + q.DLQName()
	}
	env := map[string]string{}
	for _, kv := range r.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env[resources.EnvTable] != "p-State" {
		t.Errorf("%s = %q, want p-State", resources.EnvTable, env[resources.EnvTable])
	}
	for _, q := range resources.Queues() {
		if env[q.EnvURL] != "url-of-"+q.Name {
			t.Errorf("%s = %q, want url-of-%s", q.EnvURL, env[q.EnvURL], q.Name)
		}
		if env[q.EnvDLQURL] != "url-of-"+q.DLQName() {
			t.Errorf("%s = %q, want url-of-%s", q.EnvDLQURL, env[q.EnvDLQURL], q.DLQName())
		}
	}
}
