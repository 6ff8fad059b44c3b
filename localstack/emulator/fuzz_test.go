package emulator

import (
	"strings"
	"testing"
)

func FuzzModuleName(f *testing.F) {
	f.Add([]byte("module github.com/parleyhq/parley\n\ngo 1.26\n"))
	f.Add([]byte("// c\nmodule \"example.com/x\" // trailing\n"))
	f.Add([]byte("modulex\nmodule\t\ty\n"))
	f.Add([]byte("module"))
	f.Fuzz(func(t *testing.T, gomod []byte) {
		name := moduleName(gomod)
		if strings.ContainsAny(name, "\r\n") || strings.Contains(name, "//") {
			t.Fatalf("moduleName = %q: holds a line break or comment", name)
		}
		// A name without spaces, quotes or comments reads back the same.
		if name != "" && !strings.ContainsAny(name, " \t\"") {
			if again := moduleName([]byte("module " + name + "\n")); again != name {
				t.Fatalf("module %q reads back as %q", name, again)
			}
		}
	})
}
