// Package jwks verifies the bearer tokens a platform's identity service
// signs (the Bot Framework's connector tokens, Google's): golang-jwt checks
// the signature and the claims; the keys come from the platform's published
// key set (RFC 7517, parsed with jwkset), fetched over the network within
// the caller's deadline, cached, and fetched again when a token names a key
// the cache lacks, at most once per MinRefresh, so that forged key ids
// cannot hammer the key endpoint. A fetch that fails is ErrUnavailable,
// which a webhook answers with a retryable 5xx, never a refusal.
//
// Bot Framework: https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-authentication
// Google Chat: https://developers.google.com/workspace/chat/verify-requests-from-chat
package jwks
