package fakediscord

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Test identities: the application the samples under events/discord belong
// to, the key they are signed with and the bot token the fake accepts.
// They authenticate nothing real.
const (
	// ApplicationID is the test application's id.
	ApplicationID = "1309000000000000001"
	// BotToken is the test bot's token (its first part is the application
	// id in base64, as Discord's are).
	BotToken = "MTMwOTAwMDAwMDAwMDAwMDAwMQ.GFake0.parley-discord-test-token-0000000000000"
	// KeySeed is the test key's Ed25519 seed (hex): SHA-256 of "parley
	// discord test key".
	KeySeed = "5e8c652dee966681853d1c4e6b54b43fa819be2d49497beae80ab9494ba5d428"
	// PublicKey is its public key (hex): DISCORD_PUBLIC_KEY of the samples.
	PublicKey = "bf443bc5320479ca2917055e5255c53cbe2896b5b918e003fa8cbd7113050a49"
)

// TestKey is the test application's private key (from KeySeed).
func TestKey() ed25519.PrivateKey {
	seed, _ := hex.DecodeString(KeySeed)
	return ed25519.NewKeyFromSeed(seed)
}

// Sign returns the headers Discord sends with an interaction body made at
// at, signed with key: X-Signature-Timestamp (unix seconds),
// X-Signature-Ed25519 (hex Ed25519 of the timestamp followed by the body),
// Content-Type and Discord's User-Agent.
func Sign(key ed25519.PrivateKey, at time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	sig := ed25519.Sign(key, append([]byte(ts), body...))
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "Discord-Interactions/1.0 (+https://discord.com)")
	h.Set("X-Signature-Timestamp", ts)
	h.Set("X-Signature-Ed25519", hex.EncodeToString(sig))
	return h
}

// Epoch is Discord's epoch: snowflakes count milliseconds from it.
var Epoch = time.UnixMilli(1420070400000)

// Snowflake is an id Discord would make at at (worker and sequence 1).
func Snowflake(at time.Time) string {
	return strconv.FormatUint(uint64(at.Sub(Epoch).Milliseconds())<<22|1, 10)
}

// snowflakeTime is when the snowflake id was made.
func snowflakeTime(id string) (time.Time, bool) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != id {
		return time.Time{}, false
	}
	return Epoch.Add(time.Duration(n>>22) * time.Millisecond), true
}

// tokenKey authenticates the fake's interaction tokens (a fake's own
// constant: the tokens only need to be the fake's).
var tokenKey = []byte("parley-fakediscord-interaction-tokens")

// InteractionToken is the token the fake gives interaction id (of the
// application app, in channel): "fake.<id>.<channel>.<mac>". The fake
// honours it for 15 minutes from the interaction's snowflake time, for that
// application and channel only, so it needs no memory of the interactions
// it sent.
func InteractionToken(app, id, channel string) string {
	return PressToken(app, id, channel, "")
}

// PressToken is the token of a press (a component interaction) of a
// control on message: InteractionToken, naming the message too
// ("fake.<id>.<channel>.<message>.<mac>"), which is its @original.
func PressToken(app, id, channel, message string) string {
	if message == "" {
		return "fake." + id + "." + channel + "." + tokenMAC(app, id, channel, "")
	}
	return "fake." + id + "." + channel + "." + message + "." + tokenMAC(app, id, channel, message)
}

func tokenMAC(app, id, channel, message string) string {
	m := hmac.New(sha256.New, tokenKey)
	m.Write([]byte(app + "/" + id + "/" + channel + "/" + message))
	return hex.EncodeToString(m.Sum(nil))[:20]
}

// parseToken reads an interaction token of app: its interaction's id and
// channel, and the message a press's control is on.
func parseToken(app, token string) (id, channel, message string, ok bool) {
	parts := strings.Split(token, ".")
	if (len(parts) != 4 && len(parts) != 5) || parts[0] != "fake" {
		return "", "", "", false
	}
	id, channel = parts[1], parts[2]
	if len(parts) == 5 {
		message = parts[3]
	}
	if !hmac.Equal([]byte(parts[len(parts)-1]), []byte(tokenMAC(app, id, channel, message))) {
		return "", "", "", false
	}
	return id, channel, message, true
}

// Interaction is body, a sample interaction, as Discord would send it at
// at: with a fresh id (a snowflake of at) and a token the fake honours for
// its application and channel; the rest as it is. make run posts samples
// through it, so that the reply answers a live interaction.
func Interaction(body []byte, at time.Time) ([]byte, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil || in == nil {
		return nil, errors.New("fakediscord: the sample is not a JSON object")
	}
	var app, channel string
	_ = json.Unmarshal(in["application_id"], &app)
	_ = json.Unmarshal(in["channel_id"], &channel)
	if channel == "" {
		var ch struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(in["channel"], &ch)
		channel = ch.ID
	}
	var pressed struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(in["message"], &pressed) // a press's: its @original
	id := Snowflake(at)
	in["id"], _ = json.Marshal(id)
	if _, ok := in["token"]; ok && app != "" && channel != "" {
		in["token"], _ = json.Marshal(PressToken(app, id, channel, pressed.ID))
	}
	return json.Marshal(in)
}
