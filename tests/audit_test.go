package tests

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// dockerAvailable reports whether an engine answers and the test image is
// there, so the docker-bash row of hush audit can be expected to run.
func dockerAvailable(t *testing.T) (bool, string) {
	t.Helper()
	c, err := net.DialTimeout("unix", "/var/run/docker.sock", time.Second)
	if err != nil {
		return false, "needs docker: no Docker engine at /var/run/docker.sock (scripts/provision starts one)"
	}
	c.Close()
	if err := exec.Command("docker", "image", "inspect", "hush-test/busybox:latest").Run(); err != nil {
		return false, "needs docker: the test image hush-test/busybox:latest is missing (scripts/provision builds it)"
	}
	return true, ""
}

type auditReport struct {
	Rows []struct {
		Path  string `json:"path"`
		Cells map[string]struct {
			Status string `json:"status"`
			Detail string `json:"detail"`
		} `json:"cells"`
	} `json:"rows"`
	Verdict string   `json:"verdict"`
	Risks   []string `json:"risks"`
}

// runAudit runs `hush audit --json` with the given config and returns the
// report and the exit code.
func runAudit(t *testing.T, w *world, cfg string, docker bool) (auditReport, int) {
	t.Helper()
	if docker {
		cfg += "\n[tools.dockerbash]\nimage = \"hush-test/busybox:latest\"\n"
	}
	w.config(cfg)
	args := []string{"audit", "--json"}
	if !docker {
		args = append(args, "--no-docker")
	}
	cmd := exec.Command(hushBin, args...)
	cmd.Env, cmd.Dir = w.env, w.project
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep auditReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("audit --json printed %q (stderr %q): %v", out, stderr.String(), err)
	}
	w.assertNoCanary("hush audit's output", string(out)+stderr.String())
	return rep, code
}

// red lists "path/vector" for every cell that is not pass, n/a or skip.
func (r auditReport) red() []string {
	var out []string
	for _, row := range r.Rows {
		for v, c := range row.Cells {
			if c.Status == "LEAK" || c.Status == "FAIL" {
				out = append(out, row.Path+"/"+v+"="+c.Status)
			}
		}
	}
	return sortedStrings(out)
}

func sortedStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestAuditPassesOnACleanConfiguration(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	docker, why := dockerAvailable(t)
	if !docker {
		if os.Getenv("HUSH_TEST_REQUIRE_DOCKER") != "" {
			t.Fatalf("HUSH_TEST_REQUIRE_DOCKER is set but %s", why)
		}
		t.Logf("docker-bash row left out: %s", why)
	}
	rep, code := runAudit(t, w, "", docker)
	// 1 only for the rename row's unprivileged LEAK where nobody may open
	// no FUSE device (audit_attack_test.go checks that cell).
	wantCode := 0
	if len(renameLeaksFor(t, "unprivileged")) > 0 {
		wantCode = 1
	}
	if code != wantCode || len(rep.red()) != 0 {
		t.Fatalf("exit %d, red cells %v, verdict %q", code, rep.red(), rep.Verdict)
	}
	want := []string{"bash", "background", "mcp", "read/grep"}
	if docker {
		want = append(want, "dockerbash")
	}
	if len(rep.Rows) != len(want) {
		t.Fatalf("rows = %d, want %v", len(rep.Rows), want)
	}
	for i, row := range rep.Rows {
		if row.Path != want[i] {
			t.Errorf("row %d = %s, want %s", i, row.Path, want[i])
		}
		// Every path really ran: its positive control arrived and each
		// vector it can have was checked, not skipped.
		for v, c := range row.Cells {
			if c.Status == "skip" && !(v == "agent memory" && strings.HasPrefix(c.Detail, "running as root")) {
				t.Errorf("%s/%s skipped: %s", row.Path, v, c.Detail)
			}
		}
		if row.Cells["granted"].Status != "pass" {
			t.Errorf("%s: the granted secret did not arrive", row.Path)
		}
	}
}

// Each fault, injected through a real code path ([unsafe] in config.toml),
// turns exactly the cells it should red.
func TestAuditFaultsTurnTheirCellsRed(t *testing.T) {
	t.Parallel()
	docker, why := dockerAvailable(t)
	cases := []struct {
		name   string
		cfg    string
		docker bool
		want   []string
	}{
		{"inherit all without the credential filter", "[unsafe]\nno_credential_filter = true\n[tools.bash]\ninherit = \"all\"\n", false,
			[]string{"bash/env=LEAK"}},
		{"a tool that puts a value in argv", "[unsafe]\nsecrets_in_argv = true\n", false,
			[]string{"bash/cmdlines=LEAK"}},
		{"a disabled redactor", "[unsafe]\nno_redaction = true\n", false,
			// The transcript is one file: every row's transcript cell sees
			// the bash row's unredacted output in it.
			[]string{"background/transcript=LEAK", "bash/output=LEAK", "bash/transcript=LEAK", "mcp/transcript=LEAK", "read/grep/transcript=LEAK"}},
		{"a mount without the .env mask", "[unsafe]\nno_mount_mask = true\n", true,
			[]string{"dockerbash/files=LEAK"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.docker && !docker {
				t.Skip(why)
			}
			w := newWorld(t)
			rep, code := runAudit(t, w, tc.cfg, tc.docker)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if got := strings.Join(rep.red(), " "); got != strings.Join(tc.want, " ") {
				t.Errorf("red cells:\n  %s\nwant:\n  %s", got, strings.Join(tc.want, " "))
			}
			if !strings.HasPrefix(rep.Verdict, "LEAK") {
				t.Errorf("verdict %q", rep.Verdict)
			}
		})
	}
}

func TestAuditMatrixInATerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// The world's own .env and exported credentials are risks the audit names.
	tm := startPTY(t, w, "audit", "--no-docker")
	code := tm.wait(120 * time.Second)
	screen := tm.Screen()
	// Where nobody may open no FUSE device, the rename row's unprivileged
	// cell is the one LEAK (audit_attack_test.go checks it).
	wantCode, verdict := 0, "pass: no planted secret reached"
	if len(renameLeaksFor(t, "unprivileged")) > 0 {
		wantCode, verdict = 1, "LEAK: 1 check(s) found a planted secret"
	}
	if code != wantCode {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	for _, want := range []string{
		"PATH        ENV   FILES  AGENT ENVIRON  AGENT MEMORY  CMDLINES  OUTPUT  TRANSCRIPT  AUDIT LOG  GRANTED",
		"bash        pass  n/a    pass           pass          pass      pass    pass        pass       pass",
		verdict,
		"Configuration risks:",
		"is a legacy secret file in the project",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	w.assertNoCanary("the audit screen", tm.Raw())
}
