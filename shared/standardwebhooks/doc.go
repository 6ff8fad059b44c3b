// Package standardwebhooks signs and verifies HTTP requests with the Standard
// Webhooks scheme (https://www.standardwebhooks.com), so that the receiving
// side can check them with a few lines of code, or any Standard Webhooks
// library, in any language.
//
// Parley signs every turn request it POSTs to an agent, and verifies the
// proactive events other systems POST to it, with this package.
//
// # The scheme
//
// A signed request carries three headers:
//
//	webhook-id:        a unique message id, stable across retries (an idempotency key)
//	webhook-timestamp: the attempt's time, in unix seconds
//	webhook-signature: space-separated "v1,<base64 signature>" entries
//
// where each signature is HMAC-SHA256(key, "<id>.<timestamp>.<body>") over the
// raw body bytes, base64-encoded (standard alphabet, padded). A receiver
// accepts the request when the timestamp is within a tolerance of its clock
// (5 minutes, in both directions, against replays) and any listed v1
// signature matches one of its secrets (several secrets allow zero-downtime
// rotation).
//
// # Secrets
//
// A secret written "whsec_<base64>" is the Standard Webhooks form: the key is
// the base64-decoded bytes, which is what every Standard Webhooks library
// expects. Any other string is used as the key byte for byte, so a plain
// password-like secret works too; a receiver using a Standard Webhooks library
// then passes it as a raw key (Go NewWebhookRaw, JavaScript {format: "raw"},
// Python bytes).
//
// A Secret never prints its key: String, GoString, slog and JSON show
// "[redacted]".
//
// # Use
//
//	secret, err := standardwebhooks.ParseSecret(os.Getenv("SECRET"))
//	...
//	standardwebhooks.SetHeaders(req.Header, secret, id, time.Now(), body)
//
//	v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{current, previous}}
//	id, err := v.Verify(r.Header, body, time.Now())
//	switch {
//	case errors.Is(err, standardwebhooks.ErrStale): // replay or clock skew
//	case err != nil: // missing headers, bad timestamp, no matching signature
//	}
package standardwebhooks
