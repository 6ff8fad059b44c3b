#!/usr/bin/env bash
# Sign a sample proactive event and POST it to Parley's events function, the
# way a Standard Webhooks sender (or GitHub) would.
#
#   events/events/post.sh FILE [URL]
#
# URL defaults to $PARLEY_EVENTS_URL, else http://127.0.0.1:8787/events (the
# local runner). github-<event>[-...].json files are sent as GitHub deliveries
# of <event>, signed with $GITHUB_WEBHOOK_SECRET; they go to the github
# source's one configured target (PARLEY_GITHUB_TARGET). Every other file is a
# Standard Webhooks payload, signed under the payload's "id" with
# $EVENTS_SECRET, the secret of the source the payload names. Both secrets
# default to the test values in events/events/README.md. Needs bash, curl,
# openssl.
set -euo pipefail

file=${1:?usage: $0 FILE [URL]}
url=${2:-${PARLEY_EVENTS_URL:-http://127.0.0.1:8787/events}}
name=$(basename "$file")

case $name in
github-*)
	event=${name#github-}
	event=${event%.json}
	event=${event%%-*}
	secret=${GITHUB_WEBHOOK_SECRET:-parley-github-test-secret}
	# A delivery id fixed by the file name, as events.SampleHeaders makes it,
	# so posting a file twice shows the dedupe.
	h=$(printf '%s' "$name" | sha256sum | cut -c1-32)
	delivery=${DELIVERY:-${h:0:8}-${h:8:4}-${h:12:4}-${h:16:4}-${h:20:12}}
	sig=$(openssl dgst -sha256 -hmac "$secret" <"$file" | sed 's/^.*= //')
	exec curl -sS -X POST "$url" -H 'Content-Type: application/json' \
		-H "X-GitHub-Event: $event" -H "X-GitHub-Delivery: $delivery" \
		-H "X-Hub-Signature-256: sha256=$sig" --data-binary @"$file"
	;;
esac

secret=${EVENTS_SECRET:-whsec_cGFybGV5LWV2ZW50cy10ZXN0LWtleS0wMDAx}
# The payload's top-level "id" is the first "id" key in the samples.
id=${ID:-$(grep -o '"id": *"[^"]*"' "$file" | head -n1 | sed 's/.*: *"\(.*\)"/\1/')}
if [[ -z $id ]]; then
	echo "$file has no \"id\": set ID" >&2
	exit 2
fi
ts=$(date +%s)
# The HMAC key: the base64 after whsec_, or the secret's bytes as they are.
if [[ $secret == whsec_* ]]; then
	key=$(printf '%s' "${secret#whsec_}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
else
	key=$(printf '%s' "$secret" | od -An -v -tx1 | tr -d ' \n')
fi
sig=$({ printf '%s.%s.' "$id" "$ts"; cat "$file"; } |
	openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -binary | base64 -w0)
exec curl -sS -X POST "$url" -H 'Content-Type: application/json' \
	-H "webhook-id: $id" -H "webhook-timestamp: $ts" -H "webhook-signature: v1,$sig" \
	--data-binary @"$file"
