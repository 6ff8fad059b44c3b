package agent

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"120", 2 * time.Minute},
		{" 5 ", 5 * time.Second},
		{"-5", 0},
		{"1.5", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{now.Add(48 * time.Hour).Format(http.TimeFormat), MaxRetryAfter},
		{"99999999999999999999999", MaxRetryAfter},
	} {
		if got := parseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "30", "Wed, 21 Oct 2015 07:28:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "-1", "9223372036854775808"} {
		f.Add(s)
	}
	now := time.Date(2015, 10, 21, 7, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		if d := parseRetryAfter(v, now); d < 0 || d > MaxRetryAfter {
			t.Fatalf("parseRetryAfter(%q) = %s, outside [0, %s]", v, d, MaxRetryAfter)
		}
	})
}

func FuzzReplyMediaType(f *testing.F) {
	for _, s := range []string{"application/json", "text/plain; charset=UTF-8", "Application/Json;charset", "text/html", "", ";;", `text/plain; charset="utf-8"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		mt, err := replyMediaType(header)
		if err == nil && mt != "application/json" && mt != "text/plain" {
			t.Fatalf("replyMediaType(%q) = %q", header, mt)
		}
	})
}
