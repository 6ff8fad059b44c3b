// Package fakefiles holds the files people attach, as a fake platform
// serves them to a bot: the bytes, the type the server claims, and ways to
// misbehave (a type that lies, a download that breaks off) so tests can see
// each become a reason rather than data. Each fake keys its files its
// platform's way (a file id, a message id, a CDN path) and answers a missing
// one in its platform's error format.
//
// Samples are the files the samples of events/ name, which make run's
// fakes serve so that `make post` of a photo, a document or a voice note
// reaches the echo agent as bytes.
package fakefiles

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
)

// File is one file a fake serves.
type File struct {
	Body []byte
	// ContentType is the type the server sends; empty: sniffed from Body.
	ContentType string
	// Truncate serves half of Body under the whole Body's Content-Length:
	// a download that breaks off.
	Truncate bool
}

// Type is the type f is served as.
func (f File) Type() string {
	if f.ContentType != "" {
		return f.ContentType
	}
	return http.DetectContentType(f.Body)
}

// Store is a fake's files, by its platform's key. It is safe for
// concurrent use; the zero value is ready.
type Store struct {
	mu        sync.Mutex
	files     map[string]File
	downloads map[string]int
}

// Add makes f the file at key.
func (s *Store) Add(key string, f File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string]File{}
	}
	s.files[key] = f
}

// Get is the file at key.
func (s *Store) Get(key string) (File, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[key]
	return f, ok
}

// Downloads is how many times the file at key was served.
func (s *Store) Downloads(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads[key]
}

// Serve writes the file at key as the answer, and counts it; false, with
// nothing written, when there is none (the caller answers as its
// platform does).
func (s *Store) Serve(w http.ResponseWriter, key string) bool {
	s.mu.Lock()
	f, ok := s.files[key]
	if ok {
		if s.downloads == nil {
			s.downloads = map[string]int{}
		}
		s.downloads[key]++
	}
	s.mu.Unlock()
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", f.Type())
	w.Header().Set("Content-Length", strconv.Itoa(len(f.Body)))
	body := f.Body
	if f.Truncate {
		body = body[:len(body)/2]
	}
	_, _ = w.Write(body)
	return true
}

// The sample files, by what they are: the bytes make run's fakes serve for
// the samples of events/.
var (
	// SamplePhoto is a JPEG (its first bytes are JPEG's, so sniffing takes it
	// for one).
	SamplePhoto = File{Body: append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"), bytes.Repeat([]byte{0x5a}, 4096)...), ContentType: "image/jpeg"}
	// SampleDocument is a PDF.
	SampleDocument = File{Body: []byte("%PDF-1.7\n% Parley sample: a boarding pass\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"), ContentType: "application/pdf"}
	// SampleSticker is a WEBP picture, as static stickers are.
	SampleSticker = File{Body: append([]byte("RIFF\x24\x08\x00\x00WEBPVP8 \x18\x08\x00\x00"), bytes.Repeat([]byte{0x2a}, 2072)...), ContentType: "image/webp"}
	// SampleVoiceM4A is an MP4 audio file, as LINE records voice notes
	// (sniffing names its container, video/mp4).
	SampleVoiceM4A = File{Body: append([]byte("\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00M4A mp42isom\x00\x00\x08\x08mdat"), bytes.Repeat([]byte{0x21}, 2048)...), ContentType: "audio/mp4"}
	// SampleVoice is an Ogg stream, as voice notes are recorded.
	SampleVoice = File{Body: append([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00"), bytes.Repeat([]byte{0x4f}, 2048)...), ContentType: "audio/ogg"}
)
