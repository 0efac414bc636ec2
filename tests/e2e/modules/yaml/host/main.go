// Command pulumi-language-yaml: pulumi-yaml v1.25.0's language host, served as its own main does
// (cmd/pulumi-language-yaml/main.go at that tag: same flags, engine health check, port on stdout), plus the
// LanguageRuntime `Link` method. `pulumi package add` (CLI v3.274.0, pkg/v3 cmd/pulumi/packages/packages.go
// LinkPackages) calls Link after generating a package's SDK, and v1.25.0, the newest pulumi-yaml the Go module
// proxy serves, leaves it unimplemented: `error: linking package: method Link not implemented`. A YAML program
// has nothing to link (it names the package's types directly; the CLI then records the package under
// Pulumi.yaml's `packages:`), so Link answers with no import instructions. Everything else is upstream's.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/pulumi/pulumi-yaml/pkg/server"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
)

// host is upstream's language host with Link answered.
type host struct {
	pulumirpc.LanguageRuntimeServer
}

func (host) Link(context.Context, *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	return &pulumirpc.LinkResponse{}, nil
}

func main() {
	var tracing, root, compiler string
	flag.StringVar(&tracing, "tracing", "", "Emit tracing to a Zipkin-compatible tracing endpoint")
	flag.StringVar(&root, "root", "", "Root of the program execution")
	flag.StringVar(&compiler, "compiler", "", "[obsolete] Compiler to use to pre-process YAML")
	flag.Parse()
	args := flag.Args()
	logging.InitLogging(false, 0, false)
	cmdutil.InitTracing("pulumi-language-yaml", "pulumi-language-yaml", tracing)

	var engineAddress string
	var cancelChannel chan bool
	if len(args) > 0 {
		engineAddress = args[0]
		ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
		cancelChannel = make(chan bool)
		go func() {
			<-ctx.Done()
			cancel()
			close(cancelChannel)
		}()
		if err := rpcutil.Healthcheck(ctx, engineAddress, 5*time.Minute, cancel); err != nil {
			cmdutil.Exit(fmt.Errorf("could not start health check host RPC server: %w", err))
		}
	}

	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancelChannel,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host{server.NewLanguageHost(engineAddress, tracing, false)})
			return nil
		},
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start language host RPC server: %w", err))
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host RPC stopped serving: %w", err))
	}
}
