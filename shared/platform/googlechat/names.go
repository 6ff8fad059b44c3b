package googlechat

import "strings"

// Chat's resource names, checked by hand rather than by regular
// expressions: RE2 compiles a bounded repeat such as {1,128} into that many
// copies at package initialisation, milliseconds of every function's cold
// start (each links the registry, and with it this package).

// isID reports whether s is 1 to max characters of A–Z, a–z, 0–9, '_' and
// '-', and of the characters in extra.
func isID(s string, max int, extra string) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// isThreadID reports whether s is a thread's id, the last part of its name.
func isThreadID(s string) bool { return isID(s, 128, "") }

// isSpaceName reports whether s is spaces/<id>.
func isSpaceName(s string) bool {
	id, ok := strings.CutPrefix(s, "spaces/")
	return ok && isID(id, 128, "")
}

// isUserName reports whether s is users/<id>.
func isUserName(s string) bool {
	id, ok := strings.CutPrefix(s, "users/")
	return ok && isID(id, 128, "")
}

// splitThreadName splits spaces/<space>/threads/<thread> into the space's
// name and the thread's id.
func splitThreadName(s string) (space, thread string, ok bool) {
	space, thread, ok = splitChild(s, "/threads/")
	return space, thread, ok && isThreadID(thread)
}

// messageSpace is the space's name of spaces/<space>/messages/<id>, whose
// id may hold '.' too.
func messageSpace(s string) (space string, ok bool) {
	space, id, ok := splitChild(s, "/messages/")
	return space, ok && isID(id, 256, ".")
}

// splitChild splits spaces/<space><sep><child> at sep.
func splitChild(s, sep string) (space, child string, ok bool) {
	i := strings.Index(s, sep)
	if i < 0 || !isSpaceName(s[:i]) {
		return "", "", false
	}
	return s[:i], s[i+len(sep):], true
}
