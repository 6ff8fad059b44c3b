package discord

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// The test identities of events/discord (see its README).
const (
	testApp       = "1309000000000000001"
	testPublicKey = "bf443bc5320479ca2917055e5255c53cbe2896b5b918e003fa8cbd7113050a49"
	// testSeed is SHA-256("parley discord test key"): the private key's seed.
	testSeed     = "5e8c652dee966681853d1c4e6b54b43fa819be2d49497beae80ab9494ba5d428"
	testToken    = fakediscord.BotToken
	eventsDir    = "../../../events/discord"
	guildChannel = "1309000000000000200"
	dmChannel    = "1309000000000000300"
)

// sampleNow is when the samples are signed and received: 2025-11-29
// 16:04:00 UTC, after the last of them.
var sampleNow = time.Date(2025, 11, 29, 16, 4, 0, 0, time.UTC)

var (
	guild = message.Thread{Platform: message.Discord, Account: testApp, Chat: guildChannel}
	dm    = message.Thread{Platform: message.Discord, Account: testApp, Chat: dmChannel}
)

func testKey() ed25519.PrivateKey {
	seed, _ := hex.DecodeString(testSeed)
	return ed25519.NewKeyFromSeed(seed)
}

// keyFor is the private key whose public key is publicKey for the
// samples' key, and another key, derived from the string, for any other
// "secret" the suite signs with: the wrong one.
func keyFor(publicKey string) ed25519.PrivateKey {
	if publicKey == testPublicKey {
		return testKey()
	}
	seed := sha256.Sum256([]byte(publicKey))
	return ed25519.NewKeyFromSeed(seed[:])
}

// signed builds a request as Discord sends it, signed here with
// crypto/ed25519 over the timestamp and the raw body, independently of the
// fake's Sign.
func signed(body []byte, at, now time.Time) *platform.Request {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(TimestampHeader, ts)
	h.Set(SignatureHeader, hex.EncodeToString(ed25519.Sign(testKey(), append([]byte(ts), body...))))
	return &platform.Request{Method: http.MethodPost, Header: h, Body: body, Now: now}
}

func testReceiver() *Receiver {
	r, err := NewReceiver(testPublicKey, testApp)
	if err != nil {
		panic(err)
	}
	return r
}

// jsSpace is JavaScript's \s, which Discord's client parses with.
const jsSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// discordURL is simple-markdown's url rule, written down a second time:
// what Discord's client links, and Inert leaves as written.
var discordURL = regexp.MustCompile(`^https?://[^<` + jsSpace + `]+[^<.,:;"')\]` + jsSpace + `]`)

// preprocess is what simple-markdown does to content before it parses it:
// "\r\n" and "\r" become "\n", and "\f" is dropped.
func preprocess(content string) string {
	return strings.NewReplacer("\r\n", "\n", "\r", "\n", "\f", "").Replace(content)
}

// shown is what Discord shows for text written as it is, markup aside.
func shown(text string) string { return preprocess(text) }

// view is what Discord shows for content: URLs as written; elsewhere a
// backslash before ASCII punctuation is not shown (simple-markdown's escape
// rule).
func view(content string) string {
	content = preprocess(content)
	var b strings.Builder
	for i := 0; i < len(content); {
		if m := discordURL.FindString(content[i:]); m != "" {
			b.WriteString(m)
			i += len(m)
			continue
		}
		if content[i] == '\\' && i+1 < len(content) && punct(content[i+1]) {
			b.WriteByte(content[i+1])
			i += 2
			continue
		}
		b.WriteByte(content[i])
		i++
	}
	return b.String()
}

func punct(c byte) bool {
	return c > ' ' && c < 0x7f && !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
}

// live reports markup Discord would render in content: outside URLs, one
// of * _ ~ | ` [ < > \ without its backslash (a "<" right after a URL
// aside: it cannot be escaped there, and no tag closes without a ">"), or
// a heading, a list or a numbered list at the start of a line.
func live(content string) error {
	content = preprocess(content)
	lineStart, afterURL := true, false
	for i := 0; i < len(content); {
		if m := discordURL.FindString(content[i:]); m != "" {
			i += len(m)
			lineStart, afterURL = false, true
			continue
		}
		c := content[i]
		if c == '\\' && i+1 < len(content) && punct(content[i+1]) {
			i += 2
			lineStart, afterURL = false, false
			continue
		}
		if lineStart && c != ' ' && c != '\t' {
			lineStart = false
			if strings.IndexByte("#-+", c) >= 0 {
				return errors.New("a line starts with " + string(c) + ": " + strconv.Quote(content))
			}
			j := i
			for j < len(content) && '0' <= content[j] && content[j] <= '9' {
				j++
			}
			if j > i && j < len(content) && content[j] == '.' {
				return errors.New("a line starts a numbered list: " + strconv.Quote(content))
			}
		}
		if strings.IndexByte("*_~|`[<>\\", c) >= 0 && !(c == '<' && afterURL) {
			return errors.New("unescaped " + string(c) + " at byte " + strconv.Itoa(i) + ": " + strconv.Quote(content))
		}
		// Indentation keeps a line's start: "  - item" is a list too.
		lineStart, afterURL = c == '\n' || (lineStart && (c == ' ' || c == '\t')), false
		i++
	}
	return nil
}

// show renders v for a failure message: JSON, so pointers show what they
// point at.
func show(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
