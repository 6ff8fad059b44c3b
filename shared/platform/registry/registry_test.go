package registry_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/resources"
)

const root = "../../.."

// TestEveryFunctionDirectoryIsDeclared: functions/<name> and the derived
// function list name the same functions, so the stack (built from the list)
// deploys exactly what the repository builds, and every chat platform of
// the registry has its ingress function.
func TestEveryFunctionDirectoryIsDeclared(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs, declared []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	for _, f := range registry.Functions() {
		declared = append(declared, f.Name)
	}
	slices.Sort(dirs)
	slices.Sort(declared)
	if !slices.Equal(dirs, declared) {
		t.Fatalf("functions/ holds %v, the registry derives %v", dirs, declared)
	}
	for _, a := range registry.Chat() {
		main, err := os.ReadFile(filepath.Join(root, "functions", string(a.Platform()), "main.go"))
		if err != nil {
			t.Fatalf("%s: %v", a.Platform(), err)
		}
		if !strings.Contains(string(main), "app.StartIngress(") {
			t.Errorf("functions/%s/main.go does not start its adapter's ingress", a.Platform())
		}
	}
}

// TestDerivedLists enumerates the registry and checks every list derived
// from it: a platform's ingress function reads exactly its receive secrets,
// turn and delivery read its send secrets, every secret is a secret key,
// and Lookup finds it.
func TestDerivedLists(t *testing.T) {
	fns := map[string]resources.FunctionSpec{}
	for _, f := range registry.Functions() {
		fns[f.Name] = f
	}
	keys := registry.SecretKeys()
	seen := map[string]bool{}
	for _, a := range registry.Chat() {
		name := string(a.Platform())
		if seen[name] {
			t.Fatalf("%s is listed twice", name)
		}
		seen[name] = true
		if got, ok := registry.Lookup(a.Platform()); !ok || got.Platform() != a.Platform() {
			t.Errorf("Lookup(%s) = %v, %v", name, got, ok)
		}
		ing, ok := fns[name]
		if !ok || ing.Kind != resources.Ingress {
			t.Errorf("%s has no ingress function: %+v", name, ing)
			continue
		}
		var receive, send []string
		for _, s := range a.Settings() {
			if s.Key == "" || s.Doc == "" {
				t.Errorf("%s: a setting without a key or a doc: %+v", name, s)
			}
			if !s.Secret {
				continue
			}
			if !slices.Contains(keys, s.Key) {
				t.Errorf("%s: secret %s missing from SecretKeys", name, s.Key)
			}
			if s.Half&platform.Receive != 0 {
				receive = append(receive, s.Key)
			}
			if s.Half&platform.Send != 0 {
				send = append(send, s.Key)
			}
		}
		if !slices.Equal(ing.Secrets, receive) {
			t.Errorf("%s ingress reads %v, its receive secrets are %v", name, ing.Secrets, receive)
		}
		for _, consumer := range []string{resources.Turn.Name, resources.Delivery.Name} {
			for _, k := range send {
				if !slices.Contains(fns[consumer].Secrets, k) {
					t.Errorf("%s does not read %s's send secret %s", consumer, name, k)
				}
			}
		}
	}
}

// TestREADMEDocumentsEverySetting: the README's configuration table names
// every setting of every platform, so the docs cannot forget one.
func TestREADMEDocumentsEverySetting(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range registry.Settings() {
		if !strings.Contains(string(readme), "| `"+s.Key+"`") {
			t.Errorf("README.md has no configuration row for %s", s.Key)
		}
	}
}

// TestPrivate: each platform tells its one-to-one chats from its groups by
// the thread alone, and names the person where the thread does; a platform
// that cannot tell (Discord: a channel id says neither) says group.
func TestPrivate(t *testing.T) {
	t.Parallel()
	lineUser, lineGroup := "U"+strings.Repeat("a", 32), "C"+strings.Repeat("a", 32)
	for _, tc := range []struct {
		thread  message.Thread
		person  string
		private bool
	}{
		{message.Thread{Platform: message.Telegram, Account: "1", Chat: "42"}, "42", true},
		{message.Thread{Platform: message.Telegram, Account: "1", Chat: "-1001234"}, "", false},
		{message.Thread{Platform: message.Slack, Account: "T1", Chat: "D0ADA0001"}, "", true},
		{message.Thread{Platform: message.Slack, Account: "T1", Chat: "C0CHAN001"}, "", false},
		{message.Thread{Platform: message.Slack, Account: "T1", Chat: "G0GROUP01"}, "", false},
		{message.Thread{Platform: message.LINE, Account: "Ubot", Chat: lineUser}, lineUser, true},
		{message.Thread{Platform: message.LINE, Account: "Ubot", Chat: lineGroup}, "", false},
		{message.Thread{Platform: message.WhatsApp, Account: "106", Chat: "15551234567"}, "15551234567", true},
		{message.Thread{Platform: message.Discord, Account: "1", Chat: "123456789012345678"}, "", false},
		{message.Thread{Platform: "nowhere", Account: "1", Chat: "2"}, "", false},
	} {
		if person, private := registry.Private(tc.thread); person != tc.person || private != tc.private {
			t.Errorf("Private(%s) = %q, %v; want %q, %v", tc.thread.Key(), person, private, tc.person, tc.private)
		}
	}
}
