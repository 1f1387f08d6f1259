package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/hushcli/hush/toolset/dockerbash"
)

// TestDockerInspectShowsNoGrantedSecret is issue 13's docker-bash vector
// end to end: the real binary grants a secret to a docker-bash call, and
// while the container runs, anyone who asks the engine about it — the
// official client's inspect, in the raw bytes the Engine API sends, which
// is what `docker inspect` prints — finds the secret neither in Config.Env
// nor anywhere else. The positive control: the script saw the secret
// exactly (its hash is in the tool result).
func TestDockerInspectShowsNoGrantedSecret(t *testing.T) {
	t.Parallel()
	ambient := dockerEngine(t)
	w := newWorld(t)
	for _, n := range []string{"DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"} {
		if v := ambient[n]; v != "" {
			w.env = append(w.env, n+"="+v)
		}
	}
	script := `while [ ! -e /app/release ]; do sleep 0.05; done; printf %s "$POS" | sha256sum`
	model := newFakeModel(t,
		step{calls: []fakeCall{{dockerbash.Name, map[string]any{"script": script, "env": map[string]string{"POS": "${GRANTED}"}}}}},
		step{text: "Container done."},
	)
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n\n[tools.dockerbash]\nimage = %q\n\n"+
		"[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"dockerbash\"\ndecision = \"allow\"\n", model.URL(), dockerTestImage))
	cmd := exec.Command(hushBin, "run", "--yes", "--json", "go")
	cmd.Env, cmd.Dir = w.env, w.project
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	release := func() { _ = os.WriteFile(filepath.Join(w.project, "release"), nil, 0o644) }
	defer release()
	cli, err := officialClient(ambient)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	byPID := filters.NewArgs(filters.Arg("label", dockerbash.LabelTool+"="+dockerbash.Name),
		filters.Arg("label", dockerbash.LabelPID+"="+strconv.Itoa(cmd.Process.Pid)))
	var id string
	for deadline := time.Now().Add(60 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, err := cli.ContainerList(ctx, container.ListOptions{Filters: byPID})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 && list[0].State == "running" {
			id = list[0].ID
		}
	}
	if id == "" {
		release()
		_ = cmd.Wait()
		t.Fatalf("no running container of this hush appeared; output %s%s", stdout.String(), stderr.String())
	}
	info, raw, err := cli.ContainerInspectWithRaw(ctx, id, true)
	if err != nil {
		t.Fatalf("inspect the running container: %v", err)
	}
	if strings.Contains(string(raw), w.granted) {
		t.Error("the engine's inspect answer holds the granted secret")
	}
	for _, e := range info.Config.Env {
		if strings.Contains(e, w.granted) || strings.HasPrefix(e, "POS=") {
			t.Errorf("Config.Env holds the granted variable %s", strings.SplitN(e, "=", 2)[0])
		}
	}
	w.assertNoCanary("the engine's inspect answer", string(raw))
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hush run: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), w.grantedSHA) {
		t.Fatalf("the script did not see the granted secret (positive control):\n%s", stdout.String())
	}
	parseEvents(t, []byte(stdout.String())) // every event matches docs/events.schema.json
	w.assertNoCanary("hush run's output", stdout.String()+stderr.String())
}
