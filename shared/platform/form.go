package platform

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/parleyhq/parley/shared/message"
)

// FormPart is one part of a multipart/form-data body (RFC 7578): a field's
// value, or a file's bytes when Name is set.
type FormPart struct {
	// Field is the part's name: "chat_id", "payload_json", "files[0]".
	Field string
	// Name is a file's name (the Content-Disposition's filename); "" makes
	// the part a plain field.
	Name string
	// Type is the part's Content-Type: a file's defaults to
	// application/octet-stream; a field has none unless set (Discord's
	// payload_json is application/json).
	Type  string
	Value []byte
}

// FieldPart is a plain field of a form.
func FieldPart(field, value string) FormPart { return FormPart{Field: field, Value: []byte(value)} }

// FilePart is a file of a form: its bytes, named name, of f's type.
func FilePart(field, name string, f Fetched) FormPart {
	return FormPart{Field: field, Name: name, Type: cmp.Or(f.MIME, "application/octet-stream"), Value: f.Bytes}
}

// EncodeForm writes parts as a multipart/form-data body and returns it with
// its Content-Type (which names the boundary). A part that does not encode
// is invalid_payload: nothing was sent.
func EncodeForm(parts []FormPart) ([]byte, string, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disposition := "form-data; name=" + quote(p.Field)
		if p.Name != "" {
			disposition += "; filename=" + quote(p.Name)
			p.Type = cmp.Or(p.Type, "application/octet-stream")
		}
		h.Set("Content-Disposition", disposition)
		if p.Type != "" {
			h.Set("Content-Type", p.Type)
		}
		part, err := w.CreatePart(h)
		if err == nil {
			_, err = part.Write(p.Value)
		}
		if err != nil {
			return nil, "", &message.SendError{Class: message.FailInvalidPayload, Reason: "form does not encode", Err: err}
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", &message.SendError{Class: message.FailInvalidPayload, Reason: "form does not encode", Err: err}
	}
	return body.Bytes(), w.FormDataContentType(), nil
}

// quote is a Content-Disposition parameter as mime/multipart writes a
// file's: quoted, with \ and " escaped, and line breaks (which would end
// the header) dropped.
func quote(s string) string {
	s = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "").Replace(s)
	return `"` + s + `"`
}

// SendForm sends parts as a multipart/form-data body with method to path
// below the API's root, as SendJSON sends JSON: the same refusals before
// anything is sent, the same answer through Do.
func (a API) SendForm(ctx context.Context, method, path string, header http.Header, parts []FormPart) (*Response, error) {
	body, typ, err := EncodeForm(parts)
	if err != nil {
		return nil, err
	}
	return a.send(ctx, method, path, header, typ, body)
}

// PostValues posts v form-encoded (application/x-www-form-urlencoded) to
// path below the API's root, as PostJSON posts JSON.
func (a API) PostValues(ctx context.Context, path string, header http.Header, v url.Values) (*Response, error) {
	return a.send(ctx, http.MethodPost, path, header, "application/x-www-form-urlencoded", []byte(v.Encode()))
}

// PostBytes posts body as it is, of type typ, to rawURL, an absolute URL
// the platform gave (Slack's upload_url), with no credential: the caller
// checks the URL may have the bytes. Its answer is Do's.
func (a API) PostBytes(ctx context.Context, rawURL, typ string, body []byte) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return nil, &message.SendError{Class: message.FailInvalidPayload, Reason: fmt.Sprintf("the %s upload URL does not parse", a.Name)}
	}
	req.Header.Set("Content-Type", typ)
	return Do(ctx, cmp.Or(a.HTTP, defaultHTTP), req)
}
