package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/syncbuf"
)

// TestEveryVerbAnswersHelp_Finding13 (issue 23, finding 13): `parley-local
// run -h` started the whole stack, `post -h` read a file named "-h", and
// load's -h exited 1. Every verb, and the CLI itself, answers -h, -help and
// --help with its usage and runs nothing: the context is cancelled and
// PARLEY_LISTEN names a port taken by nobody, so a verb that ran would fail
// or hang, never print a usage and succeed.
func TestEveryVerbAnswersHelp_Finding13(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env := map[string]string{"PARLEY_LISTEN": "127.0.0.1:1", "PARLEY_LOCAL_LOG": t.TempDir() + "/log"}
	getenv := func(k string) string { return env[k] }
	cases := map[string][]string{
		"":                 {"-h", "-help", "--help", "help"},
		"run":              {"-h", "-help", "--help"},
		"post":             {"-h", "--help"},
		"press":            {"-h", "--help"},
		"load":             {"-h", "--help"},
		"discord-commands": {"-h", "--help"},
	}
	for verb, helps := range cases {
		for _, h := range helps {
			args := []string{h}
			if verb != "" {
				args = []string{verb, h}
			}
			var out syncbuf.Buffer
			done := make(chan error, 1)
			go func() { done <- cli(ctx, &out, getenv, args) }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("parley-local %s: %v\n%s", strings.Join(args, " "), err, out.String())
					continue
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("parley-local %s did not answer within 10 s:\n%s", strings.Join(args, " "), out.String())
			}
			want := "usage: parley-local " + verb
			if verb == "" {
				want = "usage: parley-local [command]"
			}
			if !strings.HasPrefix(out.String(), want) {
				t.Errorf("parley-local %s printed %q, want its usage (%q…)", strings.Join(args, " "), out.String(), want)
			}
		}
	}
}
