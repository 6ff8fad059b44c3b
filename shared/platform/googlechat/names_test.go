package googlechat

import (
	"regexp"
	"testing"
)

// The patterns Chat's names follow, as regular expressions: the oracle the
// hand-written checks of names.go are held to (regexps are test-only here,
// see names.go).
var (
	spaceName   = regexp.MustCompile(`^spaces/[A-Za-z0-9_-]{1,128}$`)
	threadName  = regexp.MustCompile(`^(spaces/[A-Za-z0-9_-]{1,128})/threads/([A-Za-z0-9_-]{1,128})$`)
	messageName = regexp.MustCompile(`^(spaces/[A-Za-z0-9_-]{1,128})/messages/[A-Za-z0-9_.-]{1,256}$`)
	userName    = regexp.MustCompile(`^users/[A-Za-z0-9_-]{1,128}$`)
	threadIDPat = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
)

// FuzzNamesAgreeWithTheirPatterns: every name check answers as its
// pattern does, and splits where the pattern's groups do.
func FuzzNamesAgreeWithTheirPatterns(f *testing.F) {
	for _, s := range []string{
		"spaces/AAQAparley01", "spaces/AAQAparley01/threads/Thr00000002", "spaces/AAQA/messages/Msg.1_x-2",
		"users/100000000000000000042", "Thr00000002", "spaces/", "spaces/a/b", "spaces/a/threads/", "users/a.b",
		"spaces/a/messages/", "spaces/a/threads/b/threads/c", "spaces/a/messages/b/messages/c", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isSpaceName(s), spaceName.MatchString(s); got != want {
			t.Errorf("isSpaceName(%q) = %v, the pattern %v", s, got, want)
		}
		if got, want := isUserName(s), userName.MatchString(s); got != want {
			t.Errorf("isUserName(%q) = %v, the pattern %v", s, got, want)
		}
		if got, want := isThreadID(s), threadIDPat.MatchString(s); got != want {
			t.Errorf("isThreadID(%q) = %v, the pattern %v", s, got, want)
		}
		space, id, ok := splitThreadName(s)
		if m := threadName.FindStringSubmatch(s); (m != nil) != ok || (ok && (m[1] != space || m[2] != id)) {
			t.Errorf("splitThreadName(%q) = %q %q %v, the pattern %q", s, space, id, ok, m)
		}
		space, ok = messageSpace(s)
		if m := messageName.FindStringSubmatch(s); (m != nil) != ok || (ok && m[1] != space) {
			t.Errorf("messageSpace(%q) = %q %v, the pattern %q", s, space, ok, m)
		}
	})
}
