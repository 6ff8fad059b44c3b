package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"time"

	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// EchoImage is the picture the echo agent sends for /image: a small PNG
// with Parley's colours, the same bytes every time.
func EchoImage() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for y := range 32 {
		for x := range 32 {
			c := color.RGBA{R: 0x2b, G: 0x6c, B: 0xb0, A: 0xff}
			if (x/8+y/8)%2 == 0 {
				c = color.RGBA{R: 0xf6, G: 0xad, B: 0x55, A: 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // an in-memory RGBA: cannot fail
	return buf.Bytes()
}

// image answers /image: it uploads EchoImage through Parley's POST /media
// (e.Media), as an agent with bytes of its own does, and answers an image
// bubble naming the upload, with arg as its caption. Without e.Media, or
// when the upload fails, it says so in a text bubble.
func (e Echo) image(w http.ResponseWriter, r *http.Request, caption string) {
	w.Header().Set("Content-Type", jsonType)
	if e.Media == "" {
		_, _ = w.Write(envelope("stop", "/image needs the echo agent to know Parley's POST /media (Echo.Media)"))
		return
	}
	id, err := e.upload(r.Context(), "image/png", EchoImage())
	if err != nil {
		_, _ = w.Write(envelope("stop", "the upload failed: "+err.Error()))
		return
	}
	media := map[string]string{"kind": "image", "upload_id": id, "name": "parley.png"}
	if caption != "" {
		media["caption"] = caption
	}
	env := map[string]any{"schema": "openab.turn.v1", "messages": []any{map[string]any{"id": "image", "media": media}}}
	_ = json.NewEncoder(w).Encode(env)
}

// upload asks POST /media for a place, signed, and PUTs b there.
func (e Echo) upload(ctx context.Context, typ string, b []byte) (string, error) {
	body, _ := json.Marshal(map[string]any{"type": typ, "size": len(b)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.Media, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	var n [8]byte
	_, _ = rand.Read(n[:])
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	req.Header.Set("Content-Type", "application/json")
	standardwebhooks.SetHeaders(req.Header, e.Secret, "echo-"+hex.EncodeToString(n[:]), now(), body)
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var up struct {
		ID      string            `json:"upload_id"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&up) != nil {
		return "", fmt.Errorf("POST /media: %s", resp.Status)
	}
	put, err := http.NewRequestWithContext(ctx, http.MethodPut, up.URL, bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	for k, v := range up.Headers {
		put.Header.Set(k, v)
	}
	pr, err := client.Do(put)
	if err != nil {
		return "", err
	}
	_ = pr.Body.Close()
	if pr.StatusCode != http.StatusOK {
		return "", fmt.Errorf("PUT the upload: %s", pr.Status)
	}
	return up.ID, nil
}
