package fakeplatform

import (
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/message"
)

// sampleServer is a fake that serves the files its platform's samples in
// events/ name.
type sampleServer interface{ ServeSamples() }

// ServeSamples makes every fake serve the files the samples of events/
// name, with the sample bytes of package fakefiles: under make run, `make
// post` of a photo, a document or a voice note then reaches the agent as
// bytes it can fetch.
func (s *Server) ServeSamples() {
	for _, api := range s.apis {
		if x, ok := api.(sampleServer); ok {
			x.ServeSamples()
		}
	}
	// Telegram's and Slack's fakes keep files by id: the ids of
	// events/telegram and events/slack.
	if tg, ok := s.apis[message.Telegram].(*faketelegram.API); ok {
		for id, f := range map[string]fakefiles.File{
			"AgACAgQAAxkBAAIBZmdPhotoLarge": fakefiles.SamplePhoto, "AwACAgQAAxkBAAIBaVoiceFileId": fakefiles.SampleVoice,
			"BQACAgQAAxkBAAIBalDocFileId": fakefiles.SampleDocument, "CAACAgIAAxkBAAIBaGdStickerFileId": fakefiles.SampleSticker,
		} {
			tg.AddFile(id, f.Body)
		}
	}
	if sl, ok := s.apis[message.Slack].(*fakeslack.API); ok {
		sl.AddFile("F0PDF000001", fakefiles.SampleDocument.Body)
		sl.AddFile("F0VOICE0001", fakefiles.SampleVoice.Body)
	}
}
