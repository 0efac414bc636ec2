// bench/policy.py's engine-side client (main.go says why). Pinned to the SDK of the Pulumi CLI the e2e tier
// builds (tests/e2e/modules/pulumi), so no module beyond those is fetched.
module gpufleet.local/bench/engine_client

go 1.26.6

require (
	github.com/pulumi/pulumi/sdk/v3 v3.274.0
	google.golang.org/grpc v1.83.2
	google.golang.org/protobuf v1.36.11
)

require (
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260803160001-6ac0973c030d // indirect
)
