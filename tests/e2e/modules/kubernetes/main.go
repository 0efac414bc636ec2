// Command pulumi-resource-kubernetes: the provider's main (cmd/pulumi-resource-kubernetes/main.go at the
// pinned commit), with the two embedded files that tests/e2e/build.sh generates from the module's
// schema.json (version set) and terraform-mapping.json, as the upstream `go generate` step does.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

var providerName = "kubernetes"

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve(providerName, version.Version, pulumiSchema, terraformMapping)
}
