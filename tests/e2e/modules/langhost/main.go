// Command pulumi-language-python: a minimal LanguageRuntime for the gpufleet e2e tier (see go.mod).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is what GetPluginInfo reports (set with -ldflags at build time).
var version = "0.0.0"

// execScript is the SDK's launcher, installed next to this binary by tests/e2e/build.sh.
const execScript = "pulumi-language-python-exec"

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engine string
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-language-python ENGINE_ADDRESS")
		os.Exit(2)
	}
	h := &host{engine: os.Args[len(os.Args)-1]}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(s *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(s, h)
			return nil
		},
		Options: rpcutil.OpenTracingServerInterceptorOptions(nil),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "could not start language host: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "language host stopped: %v\n", err)
		os.Exit(1)
	}
}

// python is the interpreter of the virtualenv named by the program's `virtualenv` runtime option
// (relative to its root directory), else python3 on PATH.
func python(info *pulumirpc.ProgramInfo) string {
	if info != nil && info.Options != nil {
		if venv, ok := info.Options.AsMap()["virtualenv"].(string); ok && venv != "" {
			if !filepath.IsAbs(venv) {
				venv = filepath.Join(info.RootDirectory, venv)
			}
			return filepath.Join(venv, "bin", "python")
		}
	}
	return "python3"
}

func selfDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	return filepath.Dir(exe)
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetRequiredPlugins and GetRequiredPackages report none: default providers are then loaded on demand at
// the version each resource registration names (the SDK's own), from the local plugin directory. Listing
// every Pulumi package in the virtualenv, as the real host does, would make the CLI try to download the
// AWS and GCP providers, which this tier cannot build (docs/e2e.md).
func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	// The e2e tier runs in the project's .venv, which `make` already installed.
	return nil
}

func (h *host) About(context.Context, *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	return &pulumirpc.AboutResponse{Executable: "python3", Version: version}, nil
}

func (h *host) GetProgramDependencies(context.Context, *pulumirpc.GetProgramDependenciesRequest) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

// Run runs the program the way the real host does: the SDK's launcher with the engine's settings on the
// command line and the stack's config in PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS.
func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	config, err := json.Marshal(req.GetConfig())
	if err != nil {
		return nil, err
	}
	secretKeys, err := json.Marshal(req.GetConfigSecretKeys())
	if err != nil {
		return nil, err
	}
	args := []string{"-u", filepath.Join(selfDir(), execScript),
		"--monitor", req.GetMonitorAddress(), "--engine", h.engine,
		"--project", req.GetProject(), "--stack", req.GetStack(), "--pwd", req.GetPwd(),
		"--root_directory", req.GetInfo().GetRootDirectory(),
	}
	// The launcher reads both as values: `--dry_run true|false`, `--parallel N` (always given).
	args = append(args, "--dry_run", strconv.FormatBool(req.GetDryRun()),
		"--parallel", strconv.Itoa(int(req.GetParallel())))
	if req.GetOrganization() != "" {
		args = append(args, "--organization", req.GetOrganization())
	}
	program := req.GetInfo().GetProgramDirectory()
	if entry := req.GetInfo().GetEntryPoint(); entry != "" && entry != "." {
		program = filepath.Join(program, entry)
	}
	if program == "" {
		program = req.GetProgram()
	}
	args = append(args, program)
	args = append(args, req.GetArgs()...)

	cmd := exec.CommandContext(ctx, python(req.GetInfo()), args...)
	cmd.Dir = req.GetPwd()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "PULUMI_CONFIG="+string(config), "PULUMI_CONFIG_SECRET_KEYS="+string(secretKeys))
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			if exit.ExitCode() == 32 { // the launcher already showed the user an actionable message
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exit.ExitCode())}, nil
		}
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// RunPlugin runs a Python plugin (the policy pack): `python -u <dir> ARGS`, streaming its output back; the
// engine reads the analyzer's port from the first line of stdout.
func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	dir := req.GetInfo().GetProgramDirectory()
	if dir == "" {
		dir = req.GetProgram()
	}
	cmd := exec.Command(python(req.GetInfo()), append([]string{"-u", dir}, req.GetArgs()...)...)
	cmd.Dir = req.GetPwd()
	cmd.Env = append(os.Environ(), req.GetEnv()...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return status.Errorf(codes.Internal, "starting %s: %v", dir, err)
	}
	var mu sync.Mutex
	send := func(r *pulumirpc.RunPluginResponse) { mu.Lock(); defer mu.Unlock(); _ = server.Send(r) }
	var wg sync.WaitGroup
	pump := func(r io.Reader, wrap func([]byte) *pulumirpc.RunPluginResponse) {
		defer wg.Done()
		buf := make([]byte, 32*1024)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				send(wrap(append([]byte(nil), buf[:n]...)))
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go pump(stdout, func(b []byte) *pulumirpc.RunPluginResponse {
		return &pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: b}}
	})
	go pump(stderr, func(b []byte) *pulumirpc.RunPluginResponse {
		return &pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: b}}
	})
	go func() { <-server.Context().Done(); _ = cmd.Process.Kill() }()
	wg.Wait()
	code := 0
	if err := cmd.Wait(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if !strings.Contains(err.Error(), "killed") {
			return err
		}
	}
	send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(code)}})
	return nil
}
