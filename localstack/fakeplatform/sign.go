package fakeplatform

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

// SignSlack returns the headers Slack sends with an Events API request made
// at ts: X-Slack-Request-Timestamp, X-Slack-Signature ("v0=" + hex
// HMAC-SHA256(secret, "v0:<ts>:<body>")), and Content-Type. A retry is the
// same body with X-Slack-Retry-Num and X-Slack-Retry-Reason added.
func SignSlack(secret string, ts time.Time, body []byte) http.Header {
	unix := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + unix + ":"))
	mac.Write(body)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Slack-Request-Timestamp", unix)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

// TelegramHeaders returns the headers Telegram sends with a webhook update
// when setWebhook was given secret: X-Telegram-Bot-Api-Secret-Token and
// Content-Type.
func TelegramHeaders(secret string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	return h
}
