// Package dockerbash is the container shell tool: it runs a script with sh
// in a fresh container through the Docker Engine API (engine.go), with the project bind-mounted read-only at /app and every .env,
// .env.* and configured mask hidden inside that mount, the network off by
// default, and the container removed when the call ends — normally, on
// timeout, or on Ctrl-C.
//
// The container's environment starts empty: it holds only what the tool's
// policy sets literally and the secrets the call was granted, read through
// the gated vault (subject "dockerbash") and written to the container's
// stdin, which its entrypoint reads before the script runs — never the
// create request's Env, which the engine shows to anyone who inspects the
// container (stdinenv.go).
// Nothing of hush's environment is copied in — not even the core allowlist,
// whose host paths mean nothing in an image. The engine address and its TLS
// settings come from hush's start-up snapshot, passed to the client
// explicitly. This package never starts a process, never reads the process
// environment, and never puts a secret value in the container's command
// line, an error or a log line.
package dockerbash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/tools"
)

// Name is the tool's name and gate subject.
const Name = "dockerbash"

// DefaultTimeout bounds a script when neither the call nor config says.
const DefaultTimeout = 2 * time.Minute

// DefaultNetwork is the container's network unless config says otherwise.
const DefaultNetwork = "none"

// Workdir is where the project appears in the container.
const Workdir = "/app"

// Labels on every container the tool creates, so `docker ps -a --filter
// label=hush.tool=dockerbash` finds one a killed hush left behind.
const (
	LabelTool = "hush.tool"
	LabelPID  = "hush.pid"
)

// minArgvSecret matches the spawn layer's argv check: shorter vault values
// match ordinary text too often to refuse a script on.
const minArgvSecret = 4

// removeTimeout bounds the clean-up after the call's context is gone.
const removeTimeout = 30 * time.Second

// Tool is the docker-bash tool. Every field but Timeout and MaxTimeout is
// required; there is no default image, because no image is on every
// engine and hush never pulls one.
type Tool struct {
	// Image runs the script (tools.dockerbash.image).
	Image string
	// Network is the container's network (tools.dockerbash.network): ""
	// means DefaultNetwork, "none"; NetworkProxy, out only through hush's
	// egress proxy; anything else is a Docker network mode given as is
	// ("bridge", "host", a network's name), unfiltered.
	Network string
	// Mask adds glob patterns to the hidden paths (tools.dockerbash.mask);
	// see matchMask for their syntax.
	Mask []string
	// DataDir is hush's data dir: the empty file bound over masked files
	// lives in DataDir/dockerbash, and the data dir itself is hidden if it
	// lies inside the project.
	DataDir string
	// Timeout is the configured default (tools.dockerbash.timeout); zero
	// means DefaultTimeout. A call may ask for another, up to MaxTimeout.
	Timeout    time.Duration
	MaxTimeout time.Duration
	// Session is the hush session the calls belong to, for the
	// hush.session label.
	Session string
	// RemoveTimeout bounds the retried removal of a call's container;
	// zero means 30 s.
	RemoveTimeout time.Duration
	// UnsafeNoMountMask mounts the project without hiding anything. It
	// exists only so `hush audit`'s tests can prove the masks are
	// load-bearing ([unsafe] no_mount_mask in config.toml).
	UnsafeNoMountMask bool
}

// Params are the tool's arguments; the tags are its JSON schema.
type Params struct {
	Script         string            `json:"script"`
	Env            map[string]string `json:"env,omitempty"`
	Secrets        []string          `json:"secrets,omitempty"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
}

func (Tool) Name() string { return Name }

func (t Tool) Description() string {
	network := t.network()
	net := "The container has no network."
	switch network {
	case "none":
	case NetworkProxy:
		net = "The container reaches the network only through hush's egress proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set; programs that ignore them get no network), which allows only the hosts the policy and the call's secrets allow."
	default:
		net = "The container's network is " + strconv.Quote(network) + "."
	}
	return "Run a shell script with sh in a fresh container from the image " + strconv.Quote(t.Image) +
		" and return its combined stdout and stderr and exit code. " +
		"The project is mounted read-only at /app (the working directory); .env files and other secret files are hidden there. " +
		net + " Nothing persists between calls: write scratch files under /tmp. " +
		"The environment is empty apart from the image's own (e.g. PATH). To give the script a secret, pass env entries whose values reference the vault, " +
		"e.g. {\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"}; the user is asked before any secret is read, and secret values are shown as [REDACTED:NAME] in the output. " +
		"Never put secret values in the script itself."
}

func (Tool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "script": {"type": "string", "description": "sh script to run in the container, in /app"},
    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "environment variables; values may reference secrets as ${NAME}"},
    "secrets": {"type": "array", "items": {"type": "string"}, "description": "secret names to export under their own names; [] for none"},
    "timeout_seconds": {"type": "integer", "minimum": 1, "description": "time limit (default 120)"}
  },
  "required": ["script"],
  "additionalProperties": false
}`)
}

func (t Tool) network() string {
	if t.Network == "" {
		return DefaultNetwork
	}
	return t.Network
}

// ContainerPolicy is the spawn policy a container gets from the tool's
// configured one: only literal set values, the configured secrets and the
// proxy option survive. Inheritance, include and exclude globs and the home
// and npm options are dropped: they copy or point at the host, whose paths
// and variables mean nothing in an image — and a container must not start
// from hush's environment at all. It is exported so `hush env --tool
// dockerbash` can show what a container really gets.
func ContainerPolicy(p tools.Policy) tools.Policy {
	return tools.Policy{Inherit: tools.InheritNone, Set: p.Set, Secrets: p.Secrets, Scope: p.Scope, Proxy: p.Proxy}
}

// Run implements executor.Tool.
func (t Tool) Run(ctx context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Result, error) {
	var p Params
	if err := executor.DecodeArgs(raw, &p); err != nil {
		return executor.Result{}, err
	}
	if p.Script == "" {
		return executor.Result{}, errors.New("bad arguments: script is empty")
	}
	if t.Image == "" {
		return executor.Result{}, errors.New("dockerbash has no image: set image in [tools.dockerbash] of config.toml")
	}
	if t.DataDir == "" {
		return executor.Result{}, errors.New("dockerbash: no data dir given")
	}
	patterns := append(defaultMasks(), t.Mask...)
	if err := ValidMasks(t.Mask); err != nil {
		return executor.Result{}, fmt.Errorf("tools.dockerbash.mask in config.toml: %w", err)
	}
	// The script becomes the container's argv, which the host shows in
	// /proc/<pid>/cmdline and `ps` while it runs.
	if tc.Secrets.ContainsValue(p.Script, minArgvSecret) {
		return executor.Result{}, tools.ErrSecretInArgv
	}
	timeout := executor.CallTimeout(t.Timeout, DefaultTimeout, t.MaxTimeout, p.TimeoutSeconds)

	root, err := projectRoot(tc.Dir)
	if err != nil {
		return executor.Result{}, err
	}
	var masks []mask
	if !t.UnsafeNoMountMask {
		masks, err = planMasks(root, patterns, []string{t.DataDir})
		if err != nil {
			return executor.Result{}, fmt.Errorf("project directory %s: cannot list it to hide its .env files: %w", tc.Dir, err)
		}
	}
	empty, err := ensureEmptyFile(filepath.Join(t.DataDir, Name))
	if err != nil {
		return executor.Result{}, err
	}

	engine := EngineEnv(tc.Ambient)
	cli, err := NewClient(engine)
	if err != nil {
		return executor.Result{}, err
	}
	defer cli.Close()
	if err := ping(ctx, cli, engine); err != nil {
		if ctx.Err() != nil {
			return executor.Result{Status: "cancelled", IsError: true}, nil
		}
		return executor.Result{}, err
	}
	if err := cli.ImageInspect(ctx, t.Image); err != nil {
		if ctx.Err() != nil {
			return executor.Result{Status: "cancelled", IsError: true}, nil
		}
		if isNotFound(err) {
			return executor.Result{}, t.noImage(engine)
		}
		return executor.Result{}, engineError("inspect image "+t.Image, err)
	}

	// Secrets are read (through the gate, which may ask the user) last,
	// once the call can run: nobody is asked for a secret a missing engine
	// or image would waste. A nil Secrets field keeps the configured scope;
	// [] grants none.
	ctc := *tc
	ctc.Policy = ContainerPolicy(tc.Policy)
	env, err := ctc.BuildEnv(p.Secrets, p.Env)
	if err != nil {
		return executor.Result{}, err // start nothing
	}

	// With network = "proxy", the call's own internal network and hush's
	// proxy on its gateway, for the call's secrets; removed after the
	// container (deferred first, it runs last).
	netMode := t.network()
	if netMode == NetworkProxy {
		pn, err := t.openProxyNet(ctx, cli, tc.Ambient, ctc.Egress())
		if err != nil {
			if ctx.Err() != nil {
				return executor.Result{Status: "cancelled", IsError: true}, nil
			}
			return executor.Result{}, err
		}
		defer pn.close(ctx, cli, t.RemoveTimeout)
		netMode, env = pn.id, pn.env(env)
	}

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var removeErr error
	res, err := t.run(runCtx, cli, tc, p.Script, env, netMode, root, masks, empty, &removeErr)
	// Only a removal that happened is reported as one: the engine may be
	// gone (a cut socket, a restart) and the container still running.
	stopped := "the container was stopped and removed"
	if removeErr != nil {
		stopped = "the container could not be removed (" + removeErr.Error() + "); hush removes it on its next start, or run `docker ps -a --filter label=" + LabelTool + "=" + Name + "`"
	}
	switch {
	case runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		return executor.Result{Status: fmt.Sprintf("timed out after %s; %s", timeout, stopped), IsError: true}, nil
	case ctx.Err() != nil:
		return executor.Result{Status: "cancelled; " + stopped, IsError: true}, nil
	case removeErr != nil && err == nil:
		res.Status = strings.TrimSpace(res.Status + "; " + stopped)
		res.IsError = true
	case removeErr != nil:
		err = fmt.Errorf("%w; %s", err, stopped)
	}
	return res, err
}

// run creates, attaches to, starts and waits for the container, and always
// removes it — with a context that outlives ctx, so a timeout or Ctrl-C
// still reaches the engine.
//
// *removeErr is set to why the container may still exist, once the removal
// (retried, bounded) has given up; nil means it is gone or never existed.
func (t Tool) run(ctx context.Context, cli *Engine, tc *executor.ToolContext, script string, env tools.Env, netMode, root string, masks []mask, empty string, removeErr *error) (executor.Result, error) {
	mounts := []mountSpec{{Type: "bind", Source: root, Target: Workdir, ReadOnly: true}}
	for _, m := range masks {
		target := Workdir + "/" + m.Rel
		if m.Dir {
			mounts = append(mounts, mountSpec{Type: "tmpfs", Target: target, ReadOnly: true, TmpfsOptions: &tmpfsOptions{SizeBytes: 4096}})
			continue
		}
		mounts = append(mounts, mountSpec{Type: "bind", Source: empty, Target: target, ReadOnly: true})
	}
	// The environment goes to the container's stdin, not into the request's
	// Env, which the engine shows to anyone who inspects the container.
	payload, err := envPayload(env)
	if err != nil {
		return executor.Result{}, err
	}
	spec := containerSpec{
		Image:        t.Image,
		Cmd:          entrypointCmd(script),
		WorkingDir:   Workdir,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		OpenStdin:    true,
		StdinOnce:    true,
		Labels:       map[string]string{LabelTool: Name, LabelPID: strconv.Itoa(os.Getpid()), LabelOwner: owner(), LabelSession: t.Session},
		HostConfig: hostConfig{
			NetworkMode: netMode,
			Mounts:      mounts,
			// A backstop: if hush itself is killed, the engine still
			// removes the container when its script ends.
			AutoRemove:  true,
			SecurityOpt: []string{"no-new-privileges"},
		},
	}
	id, err := cli.ContainerCreate(ctx, spec)
	if err != nil {
		return executor.Result{}, t.createError(tc, root, err)
	}
	defer func() { *removeErr = removeContainer(context.WithoutCancel(ctx), cli, id, t.RemoveTimeout) }()

	att, err := cli.ContainerAttach(ctx, id)
	if err != nil {
		return executor.Result{}, engineError("attach to the container", err)
	}
	defer att.Close()
	stdin, err := cli.ContainerAttachStdin(ctx, id)
	if err != nil {
		return executor.Result{}, engineError("attach to the container's stdin", err)
	}
	defer stdin.Close()
	// Waiting for removal (AutoRemove) means that when the wait returns the
	// container is gone; it is registered before start so no exit is missed.
	waitC, waitErrC := cli.ContainerWait(ctx, id, "removed")
	if err := cli.ContainerStart(ctx, id); err != nil {
		return executor.Result{}, t.createError(tc, root, err)
	}
	// The entrypoint reads the environment while this writes it; closing
	// the stream ends the container's stdin (StdinOnce). A write that fails
	// leaves the script without its environment, and the container's own
	// exit says so; the result is the container's.
	go func() {
		_, _ = stdin.Write(payload)
		_ = stdin.Close()
	}()
	copied := make(chan error, 1)
	go func() {
		// One goroutine writes tc.Output, so the redactor sees one stream.
		copied <- demux(tc.Output, att)
	}()
	// drain waits for the output to end; after ctx is done it cuts the
	// stream first, so nothing writes tc.Output after Run returns.
	drain := func() {
		select {
		case <-copied:
		case <-ctx.Done():
			att.Close()
			<-copied
		}
	}
	select {
	case <-ctx.Done():
		att.Close()
		<-copied
		return executor.Result{}, ctx.Err()
	case err := <-waitErrC:
		drain()
		return executor.Result{}, engineError("wait for the container", err)
	case w := <-waitC:
		drain()
		if w.Error != nil && w.Error.Message != "" {
			return executor.Result{}, fmt.Errorf("docker engine: wait for the container: %s", w.Error.Message)
		}
		return executor.Exited(int(w.StatusCode)), nil
	}
}

// createError explains a failed create or start in one sentence.
func (t Tool) createError(tc *executor.ToolContext, root string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, ErrNoImage) {
		return t.noImage(EngineEnv(tc.Ambient))
	}
	if msg, ok := mountRefused(err); ok {
		remote := ""
		if h := tc.Ambient.DockerHost(); h != "" && !strings.HasPrefix(h, "unix://") {
			remote = " (with a remote DOCKER_HOST, the project and hush's data dir must exist at the same paths on the engine's machine)"
		}
		return fmt.Errorf("the Docker engine cannot mount the project %s at %s: %s%s", root, Workdir, oneLine(msg), remote)
	}
	return engineError("run the container", err)
}

// mountRefused reports whether err is the engine refusing the container's
// bind mounts, with the engine's message. The Engine API answers a refused
// create or start with a status (400 or 500, as for other faults) and a
// message, no code: the daemon's words, only in its reply (*apiError), are
// all there is to tell a mount apart (TestMountRefused).
func mountRefused(err error) (string, bool) {
	var ae *apiError
	if !errors.As(err, &ae) {
		return "", false
	}
	msg := ae.message
	if strings.Contains(msg, "invalid mount config") || strings.Contains(msg, "bind source path does not exist") ||
		strings.Contains(msg, "error mounting") || (strings.Contains(msg, "mount") && strings.Contains(msg, "no such file")) {
		return msg, true
	}
	return "", false
}

// EngineEnv is what NewClient reads of a tool's ambient view: DOCKER_HOST
// and the proxy settings through their own accessors (either may carry a
// password: it is hush's connection to the engine, never the container's),
// the TLS and API settings and HOME through the credential-free lookups.
func EngineEnv(a tools.Ambient) map[string]string {
	env := map[string]string{}
	for _, n := range []string{envAPIVersion, envCertPath, envTLSVerify, "HOME"} {
		if v := a.Get(n); v != "" {
			env[n] = v
		}
	}
	if h := a.DockerHost(); h != "" {
		env[envHost] = h
	}
	p := a.Proxy()
	for n, v := range map[string]string{"HTTP_PROXY": p.HTTPProxy, "HTTPS_PROXY": p.HTTPSProxy, "NO_PROXY": p.NoProxy} {
		if v != "" {
			env[n] = v
		}
	}
	return env
}

func (t Tool) noImage(ambient map[string]string) error {
	return fmt.Errorf("%w: %s is not on the engine at %s; hush never pulls, so get it with `docker pull %s` (or build it with `docker build -t %s .`), or set image in [tools.dockerbash] of config.toml to one that `docker images` lists",
		ErrNoImage, t.Image, shownHost(EngineHost(ambient)), t.Image, t.Image)
}

// projectRoot is the directory bound at /app, with symlinks resolved so
// the masks computed on the host name the paths the engine mounts.
func projectRoot(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("dockerbash: no project directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project directory %s cannot be mounted: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("project directory %s cannot be mounted at %s: it does not exist or cannot be read", dir, Workdir)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("project directory %s cannot be mounted at %s: it is not a directory", dir, Workdir)
	}
	if real == "/" {
		return "", fmt.Errorf("project directory %s cannot be mounted at %s: it is the root of the filesystem", dir, Workdir)
	}
	return real, nil
}
