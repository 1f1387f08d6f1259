package tests

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/hushcli/hush/toolset/dockerbash"
)

// dockerTestImage is built by scripts/provision from Debian's
// busybox-static, with no registry.
const dockerTestImage = "hush-test/busybox:latest"

// dockerEngine returns the engine settings of the test's environment, or
// skips with the reason no docker-bash turn can run here.
// HUSH_TEST_REQUIRE_DOCKER=1 makes that a failure instead, for CI.
func dockerEngine(t *testing.T) map[string]string {
	t.Helper()
	ambient := map[string]string{}
	for _, n := range []string{"DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_API_VERSION", "HOME"} {
		if v := os.Getenv(n); v != "" {
			ambient[n] = v
		}
	}
	skip := func(msg string) {
		t.Helper()
		if os.Getenv("HUSH_TEST_REQUIRE_DOCKER") != "" {
			t.Fatal("HUSH_TEST_REQUIRE_DOCKER is set but " + msg)
		}
		t.Skip("needs docker: " + msg)
	}
	cli, err := officialClient(ambient)
	if err != nil {
		skip(fmt.Sprintf("no Docker client: %v", err))
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		skip(fmt.Sprintf("no Docker engine answers at %s (scripts/provision starts one): %v", dockerbash.EngineHost(ambient), err))
	}
	if _, err := cli.ImageInspect(ctx, dockerTestImage); err != nil {
		skip(fmt.Sprintf("the engine has no %s (scripts/provision imports it from busybox-static): %v", dockerTestImage, err))
	}
	return ambient
}

// dockerLeakScript is leakScript for a container: the environment, the
// project's .env through the /app mount (and its size, which must be 0),
// the mount's listing, and the positive control hashed inside.
const dockerLeakScript = `env; echo ---; cat /app/.env; echo "dotenv-bytes=$(wc -c < /app/.env)"; echo ---; ls -la /app; echo ---; ` +
	`echo "positive=$POS"; printf %s "$POS" | sha256sum`

var containerID = regexp.MustCompile(`HOSTNAME=([0-9a-f]{12})`)

// TestChatDockerTurnLeaksNothing is seed 000's step 4 end to end: hush in a
// PTY, a fake model that calls dockerbash, a real engine. The user allows
// the one secret at the prompt; nothing else — vault, .env, environment —
// reaches the model, the screen, the transcript or the audit log, and the
// .env inside the container is empty. Afterwards the container is gone.
func TestChatDockerTurnLeaksNothing(t *testing.T) {
	t.Parallel()
	ambient := dockerEngine(t)
	w := newWorld(t)
	for _, n := range []string{"DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"} {
		if v := ambient[n]; v != "" {
			w.env = append(w.env, n+"="+v)
		}
	}
	args := map[string]any{"script": dockerLeakScript, "env": map[string]string{"POS": "${GRANTED}"}}
	model := newFakeModel(t,
		step{text: "Let me look from inside a container.", calls: []fakeCall{{dockerbash.Name, args}}},
		step{text: "Container check done: nothing secret was visible."},
	)
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[tools.dockerbash]
image = %q

[[rules]]
gate = "tool.run:dockerbash"
subject = "dockerbash"
decision = "allow"
`, model.URL(), dockerTestImage))
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("check the container please\r")
	expectDockerTool(tm, "dockerbash wants the secret GRANTED")
	tm.send("\r")
	tm.expect("Container check done: nothing secret was visible.", 60*time.Second)
	tm.expect("› ", 10*time.Second)
	tm.quit()
	received := model.Received()

	for where, text := range map[string]string{
		"the screen": tm.Raw(), "the requests the model received": received,
		"the transcript": w.transcripts(), "the audit log": w.audit(),
	} {
		w.assertNoCanary(where, text)
		// Not even redacted: the .env's content never reached the container.
		// (The system prompt names the user's secrets, DOTENV_CANARY among
		// them, so the model knows what it may ask for: that is not the
		// file's content.)
		text = secretNamesLine.ReplaceAllString(text, "")
		if strings.Contains(text, "DOTENV_CANARY") {
			t.Errorf("%s mentions DOTENV_CANARY: the project .env was readable in the container", where)
		}
	}
	for _, want := range []string{"PATH=", "dotenv-bytes=0", " .env", " README", "positive=[REDACTED:GRANTED]", w.grantedSHA, "[exit code 0]"} {
		if !strings.Contains(received, want) {
			t.Errorf("the tool result lacks %q; the turn did not run as scripted:\n%s", want, received)
		}
	}
	if !strings.Contains(tm.Screen(), "● dockerbash env; echo ---") {
		t.Errorf("the tool call was not shown with its arguments:\n%s", tm.Screen())
	}
	if !strings.Contains(w.audit(), `"tool":"dockerbash","gate":"vault.read:GRANTED","decision":"allow","source":"prompt"`) {
		t.Errorf("audit does not record the prompt's allow for dockerbash:\n%s", w.audit())
	}

	m := containerID.FindStringSubmatch(received)
	if m == nil {
		t.Fatalf("no container id (HOSTNAME) in the tool result:\n%s", received)
	}
	cli, err := officialClient(ambient)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.ContainerInspect(context.Background(), m[1]); !cerrdefs.IsNotFound(err) {
		t.Errorf("container %s still exists after the turn (inspect: %v)", m[1], err)
	}
}

// TestChatCtrlCRemovesTheContainer: Ctrl-C during a docker-bash call stops
// the turn, and the container is stopped and removed, not left running.
func TestChatCtrlCRemovesTheContainer(t *testing.T) {
	t.Parallel()
	ambient := dockerEngine(t)
	w := newWorld(t)
	for _, n := range []string{"DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"} {
		if v := ambient[n]; v != "" {
			w.env = append(w.env, n+"="+v)
		}
	}
	model := newFakeModel(t,
		step{calls: []fakeCall{{dockerbash.Name, map[string]any{"script": `echo "HOSTNAME=$HOSTNAME"; echo "container-$((1+1))-started"; sleep 300`}}}},
	)
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n\n[tools.dockerbash]\nimage = %q\n\n"+
		"[[rules]]\ngate = \"tool.run:dockerbash\"\nsubject = \"dockerbash\"\ndecision = \"allow\"\n", model.URL(), dockerTestImage))
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("run something long\r")
	expectDockerTool(tm, "container-2-started") // output, not the echoed command
	m := containerID.FindStringSubmatch(tm.Screen())
	if m == nil {
		t.Fatalf("no container id on the screen:\n%s", tm.Screen())
	}
	tm.send("\x03")
	tm.expect("turn cancelled", 30*time.Second)
	tm.quit()
	cli, err := officialClient(ambient)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.ContainerInspect(context.Background(), m[1]); !cerrdefs.IsNotFound(err) {
		t.Errorf("container %s still exists after Ctrl-C (inspect: %v)", m[1], err)
	}
}

// expectDockerTool waits for want, failing at once with the reason when
// the session has no dockerbash tool to call.
func expectDockerTool(tm *term, want string) {
	tm.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		screen := tm.Screen()
		if strings.Contains(screen, want) {
			return
		}
		if strings.Contains(screen, `unknown tool "dockerbash"`) {
			tm.t.Fatal("the session does not register dockerbash: add the wiring from dockerbash_wiring.go to session.go")
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.t.Fatalf("timed out waiting for %q; screen:\n%s", want, tm.Screen())
}

// officialClient is the Docker project's own client. The tests use it, not
// hush's, to see what the engine holds after a call.
func officialClient(ambient map[string]string) (*client.Client, error) {
	return client.NewClientWithOpts(client.WithHost(dockerbash.EngineHost(ambient)), client.WithAPIVersionNegotiation())
}

// secretNamesLine is the system prompt's list of secret names.
var secretNamesLine = regexp.MustCompile(`Secrets the user has, by name: [A-Z0-9_, ]*\.`)
