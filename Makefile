# Parley — the two commands a new user needs are `make run` and `make test`.
# Every target that needs tools calls `setup` first; setup is idempotent.

SHELL       := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

NPM_BIN   := $(CURDIR)/localstack/_npm/node_modules/.bin
CDK       := $(NPM_BIN)/cdk
CDKLOCAL  := $(NPM_BIN)/cdklocal
FUNCTIONS := $(notdir $(wildcard functions/*))
GO_TEST_FLAGS ?=
# Cold starts per function in make bench: the init ratio is a ratio of
# medians, and fewer rounds leave it to the machine's noise. Benchmarks run
# one package at a time (-p 1): a ratio to a baseline of the same run means
# little while another package's benchmarks share the CPUs.
COLDSTART_ROUNDS ?= 31

# jsii (the CDK's Go bindings) runs node; keep it and the CDK CLI quiet.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export CDK_DISABLE_CLI_TELEMETRY := 1
export CDK_DISABLE_VERSION_CHECK := 1

.PHONY: help setup test test-root test-infra tidy-check run build synth deploy deploy-local test-localstack post post-event load discord-commands screenshots bench sim fmt lint clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

setup: ## install what the local stack needs (Java, Chromium, npm tools); fast when done
	@bash localstack/setup.sh

test: setup tidy-check test-root test-infra ## run every test: the functions on DynamoDB Local + fauxqs, and the CDK stack

tidy-check: ## go mod tidy changes nothing, in either module
	go mod tidy -diff
	cd infra && go mod tidy -diff

test-root:
	go test -race -count=1 $(GO_TEST_FLAGS) ./...

test-infra:
	cd infra && go test -count=1 $(GO_TEST_FLAGS) ./...

run: setup ## run Parley locally: emulators, every function, the echo agent, a fake platform
	go run ./localstack/cmd/parley-local

build: ## build one arm64 Lambda zip per function under build/, and print their sizes
	@rm -rf build && mkdir -p build
	@for fn in $(FUNCTIONS); do \
		mkdir -p build/$$fn; \
		GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' \
			-o build/$$fn/bootstrap ./functions/$$fn; \
		touch -d '2000-01-01 00:00:00' build/$$fn/bootstrap; \
		(cd build/$$fn && zip -q -X ../$$fn.zip bootstrap); \
	done
	@printf '%-10s %10s %10s\n' function bootstrap zip
	@for fn in $(FUNCTIONS); do \
		printf '%-10s %9sK %9sK\n' $$fn $$(( $$(stat -c %s build/$$fn/bootstrap) / 1024 )) $$(( $$(stat -c %s build/$$fn.zip) / 1024 )); \
	done

synth: setup build ## synthesize the CloudFormation template into infra/cdk.out
	cd infra && $(CDK) synth -q --no-notices
	@echo "template: infra/cdk.out/Parley.template.json"

deploy: setup build ## deploy to the AWS account of your current credentials
	cd infra && $(CDK) deploy --no-notices --require-approval broadening

# LocalStack runs Lambda on the host's architecture: its zips are built for it.
LS_ENV := AWS_ENDPOINT_URL=http://localhost:4566 AWS_ENDPOINT_URL_S3=http://s3.localhost.localstack.cloud:4566 \
	AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
	AWS_ENVAR_ALLOWLIST=AWS_REGION,AWS_DEFAULT_REGION

deploy-local: setup ## deploy to LocalStack (needs Docker; see README)
	docker compose -f localstack/docker-compose.yml up -d --wait
	@rm -rf build/host && mkdir -p build/host .parley/localstack
	@for fn in $(FUNCTIONS); do mkdir -p build/host/$$fn; \
		GOOS=linux GOARCH=$$(go env GOARCH) CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' \
			-o build/host/$$fn/bootstrap ./functions/$$fn; \
		(cd build/host/$$fn && zip -q -X ../$$fn.zip bootstrap); done
	cd infra && $(LS_ENV) $(CDKLOCAL) bootstrap aws://000000000000/us-east-1 --no-notices -c parley:assetDir=../build/host
	cd infra && $(LS_ENV) $(CDKLOCAL) deploy --no-notices --require-approval never -c parley:assetDir=../build/host \
		--outputs-file ../.parley/localstack/outputs.json

test-localstack: ## run the integration tests against LocalStack (needs Docker; see README)
	PARLEY_TEST_AWS=external AWS_ENDPOINT_URL=$${AWS_ENDPOINT_URL:-http://localhost:4566} AWS_REGION=us-east-1 \
		AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
		go test -count=1 $(GO_TEST_FLAGS) ./shared/... ./localstack/runner/...

post: ## sign a sample webhook and post it to make run: make post FILE=events/slack/message-im.json
	go run ./localstack/cmd/parley-local post $(FILE)

post-event: ## sign a sample proactive event and post it to make run (FILE=events/events/alert.json)
	go run ./localstack/cmd/parley-local post $(or $(FILE),events/events/alert.json)

load: setup ## a bounded load run on the local stack: throughput, p50/p99, order and exactly-once (LOAD="-threads 20 -messages 10")
	go run ./localstack/cmd/parley-local load $(LOAD)

discord-commands: ## register /ask and "Ask the agent" for DISCORD_APPLICATION_ID with DISCORD_BOT_TOKEN
	go run ./localstack/cmd/parley-local discord-commands

screenshots: setup ## write docs/console*.png: the console in headless Chromium, driven by its browser test
	PARLEY_CONSOLE_SCREENSHOTS=$(CURDIR)/docs go test -count=1 -run TestConsoleInTheBrowser ./localstack/console/

bench: setup ## run the benchmarks (ingress CPU per event, AWS calls per message, cold starts, envelope, adapters)
	go test -p 1 -run '^$$' -bench . -skip BenchmarkColdStart -benchmem -count=1 ./...
	go test -run '^$$' -bench BenchmarkColdStart -benchtime $(COLDSTART_ROUNDS)x -count=1 ./localstack/coldstart/

# The deterministic simulation: SEEDS runs from seed 1 (or one SEED, traced),
# for at most DURATION (0: no limit).
SEEDS    ?= 1000
SEED     ?=
DURATION ?= 0
sim: ## run the pipeline's simulation under seeded faults (SEEDS=, DURATION=, or SEED= to replay one)
	@if [ -n "$(SEED)" ]; then go test -count=1 -run 'TestSim$$' ./localstack/sim -seed=$(SEED) -v; \
	else go test -count=1 -timeout 0 -v -run 'TestSim$$' ./localstack/sim -seeds=$(SEEDS) -duration=$(DURATION); fi

fmt: ## format the Go code
	gofmt -w $$(git ls-files '*.go')

lint: tidy-check ## gofmt check, go mod tidy, go vet and staticcheck, for both modules
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go vet ./...
	go tool staticcheck ./...
	cd infra && go vet ./... && go tool staticcheck ./...

clean: ## remove build output, synthesized templates and local run state
	rm -rf build infra/cdk.out .parley
