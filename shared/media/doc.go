// Package media stores the files people attach and hands the agent a URL
// for each.
//
// A webhook's handler acks at once and never downloads: the platform's
// receiver only describes each file on its event (message.Attachment: kind,
// type, size, the platform's file id). The turn, before it calls the agent,
// stages them (Stager.Stage): each file is downloaded through its platform's
// adapter (platform.Downloader), checked, put in the media bucket under a
// key derived from the event's dedupe key and the file's index, and
// presigned. The key makes staging idempotent: a retried turn finds the
// object (HeadObject) and fetches nothing from the platform again.
//
// What reaches the agent is per attachment either a presigned GET URL (valid
// for Config.URLTTL) with the bytes' SHA-256, their sniffed type and size,
// or no URL and a reason (message.AttachmentReason): media off, too large,
// a type the allow-list refuses, a type the bytes contradict, a platform
// that would not serve it. Only the object store failing is an error: the
// turn is retried through its queue, and the message is never lost.
//
// Objects expire with the bucket's lifecycle rule (PARLEY_MEDIA_TTL, the
// stack's). A presigned URL also ends when the credentials that signed it
// do: the turn function's role session, so keep Config.URLTTL within it.
package media
