package slack

import (
	"crypto/hmac"
	"crypto/sha256"
)

func hmacSHA256(key, msg string) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(msg))
	return m.Sum(nil)
}
