// Package whatsapp is Parley's WhatsApp adapter, on Meta's Cloud API: a
// Receiver for the WhatsApp Business Account webhook (the GET verification
// handshake, the X-Hub-Signature-256 check, text messages → message.Event,
// reply-button and list replies → message.KindAnswer, delivery statuses →
// message.KindStatus) and a Client that sends text, reply buttons and list
// messages with POST /<phone number id>/messages.
//
// Webhooks: https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview
// Messages: https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/text-messages/
// Interactive messages: https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/interactive-reply-buttons-messages
// Error codes: https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes/
package whatsapp
