// A stand-in for the Pulumi engine's side of the Analyzer protocol, for bench/policy.py: it sends a policy
// pack the calls `pulumi preview` sends, over the same generated Go client the engine uses
// (github.com/pulumi/pulumi/sdk/v3/proto/go, pulumirpc.AnalyzerClient), so the figure is the pack's, not
// a Python client's.
//
//	engine_client PORT REQUESTS_FILE
//
// REQUESTS_FILE (written by bench/policy.py): length-prefixed (uint32, big-endian) serialized messages:
// one ConfigureAnalyzerRequest, N AnalyzeRequests, one AnalyzeStackRequest. The calls, as the engine makes
// them (pulumi/pulumi @1b5949891b):
//   - Configure once;
//   - per resource, one after the other, Remediate then Analyze of the same resource, Remediate's with the
//     internal `__defaults` key on aws and gcp resources (remediateRequest) (pkg/resource/deploy/step_generator.go,
//     "First pass: perform remediations sequentially", then analyzeAll; registrations reach the step
//     generator one event at a time, deployment_executor.go handleSingleEvent). Remediate answered
//     UNIMPLEMENTED counts as an empty answer (pkg/resource/plugin/analyzer_plugin.go Remediate);
//   - AnalyzeStack once with every resource.
//
// The engine marshals each resource's properties before its calls (analyzer_plugin.go MarshalProperties);
// here the requests are decoded before the clock starts, so the figure leaves out the engine's own work.
// Prints one JSON line: seconds, resources, diagnostics.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

func frames(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	for {
		var n uint32
		if err := binary.Read(f, binary.BigEndian, &n); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(f, b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return fmt.Errorf("usage: engine_client PORT REQUESTS_FILE")
	}
	raw, err := frames(os.Args[2])
	if err != nil {
		return err
	}
	if len(raw) < 2 {
		return fmt.Errorf("%s: want a Configure, resources and a stack request", os.Args[2])
	}
	configure := &pulumirpc.ConfigureAnalyzerRequest{}
	if err := proto.Unmarshal(raw[0], configure); err != nil {
		return err
	}
	stack := &pulumirpc.AnalyzeStackRequest{}
	if err := proto.Unmarshal(raw[len(raw)-1], stack); err != nil {
		return err
	}
	requests := make([]*pulumirpc.AnalyzeRequest, 0, len(raw)-2)
	remediates := make([]*pulumirpc.AnalyzeRequest, 0, len(raw)-2)
	for _, b := range raw[1 : len(raw)-1] {
		r := &pulumirpc.AnalyzeRequest{}
		if err := proto.Unmarshal(b, r); err != nil {
			return err
		}
		requests = append(requests, r)
		remediates = append(remediates, remediateRequest(r))
	}
	conn, err := grpc.NewClient("127.0.0.1:"+os.Args[1], grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := pulumirpc.NewAnalyzerClient(conn)
	ctx := context.Background()
	diagnostics := 0
	start := time.Now()
	if _, err := client.Configure(ctx, configure); err != nil {
		return fmt.Errorf("Configure: %w", err)
	}
	for i, r := range requests {
		if _, err := client.Remediate(ctx, remediates[i]); err != nil && status.Code(err) != codes.Unimplemented {
			return fmt.Errorf("Remediate %s: %w", r.Urn, err)
		}
		resp, err := client.Analyze(ctx, r)
		if err != nil {
			return fmt.Errorf("Analyze %s: %w", r.Urn, err)
		}
		diagnostics += len(resp.Diagnostics)
	}
	resp, err := client.AnalyzeStack(ctx, stack)
	if err != nil {
		return fmt.Errorf("AnalyzeStack: %w", err)
	}
	diagnostics += len(resp.Diagnostics)
	seconds := time.Since(start).Seconds()
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"seconds": seconds, "resources": len(requests), "diagnostics": diagnostics})
}

// remediateRequest is the resource as Remediate carries it: the engine marshals Remediate's properties
// with SkipInternalKeys false and Analyze's with it true (analyzer_plugin.go), so Remediate also carries
// the top-level internal keys of the checked inputs. The Terraform-bridged providers (aws, gcp) put
// `__defaults` there (pulumi/pulumi-terraform-bridge pkg/tfbridge/schema.go, defaultsKey).
func remediateRequest(r *pulumirpc.AnalyzeRequest) *pulumirpc.AnalyzeRequest {
	if !strings.HasPrefix(r.Type, "aws:") && !strings.HasPrefix(r.Type, "gcp:") {
		return r
	}
	out := proto.Clone(r).(*pulumirpc.AnalyzeRequest)
	if out.Properties == nil {
		out.Properties = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	out.Properties.Fields["__defaults"] = structpb.NewListValue(&structpb.ListValue{})
	return out
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "engine_client:", err)
		os.Exit(1)
	}
}
