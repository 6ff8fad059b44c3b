// Package registry is the one list of Parley's chat platforms. Everything
// that varies by platform derives from it: the settings config reads and
// checks, the ingress functions and their secrets (and with them the stack's
// functions, URLs and grants), the local runner's routes, the events
// webhook's targets, and the fake platforms of make run.
//
// Adding a platform is its package under shared/platform (an
// platform.Adapter that passes platformtest), one line in chat below, a thin
// functions/<name>/main.go and a fake under localstack/fakeplatform; the
// registry's test fails until every derived list has it.
package registry

import (
	"slices"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
	"github.com/parleyhq/parley/shared/resources"
)

// chat is every chat platform, in the order Parley lists them.
var chat = []platform.Adapter{
	telegram.Adapter,
	slack.Adapter,
	discord.Adapter,
	line.Adapter,
	whatsapp.Adapter,
	teams.Adapter,
	googlechat.Adapter,
}

// Chat returns every chat platform's adapter.
func Chat() []platform.Adapter { return slices.Clone(chat) }

// Lookup returns the adapter of p.
func Lookup(p message.Platform) (platform.Adapter, bool) {
	for _, a := range chat {
		if a.Platform() == p {
			return a, true
		}
	}
	return nil, false
}

// Specs describes every chat platform as the declaration of resources needs
// it: its name and the secrets each half reads.
func Specs() []resources.PlatformSpec {
	specs := make([]resources.PlatformSpec, 0, len(chat))
	for _, a := range chat {
		spec := resources.PlatformSpec{Name: string(a.Platform())}
		for _, s := range a.Settings() {
			if !s.Secret {
				continue
			}
			if s.Half&platform.Receive != 0 {
				spec.ReceiveSecrets = append(spec.ReceiveSecrets, s.Key)
			}
			if s.Half&platform.Send != 0 {
				spec.SendSecrets = append(spec.SendSecrets, s.Key)
			}
		}
		specs = append(specs, spec)
	}
	return specs
}

// Functions lists every function: one ingress per chat platform, the events
// ingress, turn, delivery and the sweeper. Each has a directory
// functions/<Name>.
func Functions() []resources.FunctionSpec { return resources.FunctionsWith(Specs()) }

// FunctionsFor is Functions with the consumers' timeouts sized for t.
func FunctionsFor(t resources.Timing) []resources.FunctionSpec { return t.Sized(Functions()) }

// Function returns the function named name.
func Function(name string) (resources.FunctionSpec, bool) {
	for _, f := range Functions() {
		if f.Name == name {
			return f, true
		}
	}
	return resources.FunctionSpec{}, false
}

// MustFunction is Function for a name known to exist (a function's main).
func MustFunction(name string) resources.FunctionSpec {
	f, ok := Function(name)
	if !ok {
		panic("registry: no function " + name)
	}
	return f
}

// Settings lists every chat platform's settings, platform by platform.
func Settings() []platform.Setting {
	var out []platform.Setting
	for _, a := range chat {
		out = append(out, a.Settings()...)
	}
	return out
}

// SecretKeys lists every secret key: every platform's, then the core's. None
// may ever be a plain environment variable of a deployed function.
func SecretKeys() []string {
	var keys []string
	for _, s := range Settings() {
		if s.Secret && !slices.Contains(keys, s.Key) {
			keys = append(keys, s.Key)
		}
	}
	return append(keys, resources.CoreSecretKeys()...)
}
