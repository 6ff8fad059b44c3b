// Package split cuts a text into platform-sized messages.
//
// A platform caps one message (message.Capabilities.TextLimit) and counts
// its length its own way (Capabilities.Counting: Telegram in UTF-16 code
// units, most others in code points). Text cuts where a reader would: the
// end of a paragraph, then of a line, then a space, never inside a
// character, a surrogate pair or a grapheme cluster (emoji sequences, flags,
// accents stay whole), and repairs code fences across a cut:
//
//	parts := split.Text(reply, message.Capabilities{TextLimit: 2000, Counting: message.CountRunes})
//
// It is pure and knows nothing of envelopes: package envelope plans a
// bubble's units with it, and anything else that must fit a platform's
// limit can use it (and Count) the same way.
package split
