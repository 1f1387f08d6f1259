package vault_test

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hushcli/hush/vault"
)

// flaky wraps a real backend: it accepts setsLeft writes and then fails,
// or stores a corrupted value, the way a backend that breaks half-way does.
type flaky struct {
	vault.Vault
	mu       sync.Mutex
	setsLeft int
	corrupt  string // a name whose stored value is altered
	failOn   string // a name whose Set fails
	deletes  bool   // Delete fails
}

func (f *flaky) Set(name, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setsLeft == 0 || name == f.failOn {
		return errors.New("injected: the backend is full")
	}
	f.setsLeft--
	if name == f.corrupt {
		value += "~"
	}
	return f.Vault.Set(name, value)
}

func (f *flaky) Delete(name string) error {
	if f.deletes {
		return errors.New("injected: delete failed")
	}
	return f.Vault.Delete(name)
}

var moveSecretsValues = map[string]string{
	"A_TOKEN": "value-a-" + canaryValue, "B_KEY": "value-b\nline2", "C_PASS": `"quoted" \ $X`, "D_URL": "postgres://u:p@h/db", "E": "007",
}

const canaryValue = "zq9MOVEcanary"

func envfileWith(t *testing.T, kv map[string]string) *vault.EnvFile {
	t.Helper()
	e := vault.NewEnvFile(filepath.Join(t.TempDir(), vault.EnvFileName))
	for k, v := range kv {
		if err := e.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// TestMoveLosesNothing: whichever step fails, every secret is still
// readable from the backend that config.toml names afterwards.
func TestMoveLosesNothing(t *testing.T) {
	t.Parallel()
	preexisting := map[string]string{"OTHER": "kept in the target", "E": "007"}
	tests := []struct {
		name        string
		setsLeft    int
		corrupt     string
		commitErr   error
		deleteFails bool
		wantErr     string
		switched    bool
	}{
		{name: "first copy fails", setsLeft: 0,
			wantErr: "copy A_TOKEN: injected: the backend is full; nothing was switched: the old backend is unchanged and the copies were removed"},
		{name: "fails half-way", setsLeft: 2,
			wantErr: "copy C_PASS: injected: the backend is full; nothing was switched: the old backend is unchanged and the copies were removed"},
		{name: "a value does not read back", setsLeft: 100, corrupt: "B_KEY",
			wantErr: "secret B_KEY did not read back unchanged from the new backend; nothing was switched: the old backend is unchanged and the copies were removed"},
		{name: "the config switch fails", setsLeft: 100, commitErr: errors.New("disk full"),
			wantErr: "switch the config: disk full; nothing was switched: the old backend is unchanged and the copies were removed"},
		{name: "deleting from the old backend fails", setsLeft: 100, deleteFails: true, switched: true},
		{name: "all well", setsLeft: 100, switched: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fromFile := envfileWith(t, moveSecretsValues)
			from := &flaky{Vault: fromFile, setsLeft: -1, deletes: tt.deleteFails}
			toFile := envfileWith(t, preexisting)
			to := &flaky{Vault: toFile, setsLeft: tt.setsLeft, corrupt: tt.corrupt}
			commits := 0
			rep, err := vault.Move(from, to, nil, func() error { commits++; return tt.commitErr })
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v\nwant %s", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), canaryValue) {
					t.Errorf("the error shows a value: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			src, _ := fromFile.All()
			dst, _ := toFile.All()
			if !tt.switched {
				if !maps.Equal(src, moveSecretsValues) {
					t.Errorf("the old backend changed: %q", src)
				}
				if !maps.Equal(dst, preexisting) {
					t.Errorf("the new backend was not restored: %q", dst)
				}
				return
			}
			if commits != 1 {
				t.Errorf("commit ran %d times", commits)
			}
			want := maps.Clone(preexisting)
			maps.Copy(want, moveSecretsValues)
			if !maps.Equal(dst, want) {
				t.Errorf("the new backend holds %q\nwant %q", dst, want)
			}
			if !slices.Equal(rep.Moved, slices.Sorted(maps.Keys(moveSecretsValues))) {
				t.Errorf("moved = %q", rep.Moved)
			}
			if tt.deleteFails {
				if !maps.Equal(src, moveSecretsValues) || !slices.Equal(rep.LeftBehind, rep.Moved) {
					t.Errorf("left behind %q, old backend %q", rep.LeftBehind, src)
				}
				if want := "could not delete A_TOKEN, B_KEY, C_PASS, D_URL, E from the envfile backend (injected: delete failed); they are safe in the new one — delete them there by hand"; rep.Warning("envfile") != want {
					t.Errorf("warning = %q", rep.Warning("envfile"))
				}
			} else if len(src) != 0 {
				t.Errorf("the old backend still holds %q", slices.Sorted(maps.Keys(src)))
			}
		})
	}
}

func TestMoveRefusesConflicts(t *testing.T) {
	t.Parallel()
	from := envfileWith(t, map[string]string{"A": "one", "B": "same"})
	to := envfileWith(t, map[string]string{"A": "two", "B": "same"})
	_, err := vault.Move(from, to, nil, func() error { t.Error("commit ran"); return nil })
	if want := "both backends hold A with different values; nothing was moved (remove one of the two copies first)"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	// extra (a key typed in setup) may replace a target's value, and is
	// restored when the move fails.
	failing := &flaky{Vault: to, setsLeft: -1, failOn: "C"}
	_, err = vault.Move(envfileWith(t, map[string]string{"B": "same", "C": "c"}), failing, map[string]string{"A": "new"}, func() error { return nil })
	if err == nil {
		t.Fatal("the move did not fail")
	}
	if got, _ := to.All(); !maps.Equal(got, map[string]string{"A": "two", "B": "same"}) {
		t.Errorf("target after a failed move = %q", got)
	}
}

func TestImport(t *testing.T) {
	t.Parallel()
	e := envfileWith(t, map[string]string{"SAME": "s", "DIFF": "vault value"})
	entries := map[string]string{
		"GOOD": "g-" + canaryValue, "SAME": "s", "DIFF": "file value " + canaryValue,
		"BAD-NAME": canaryValue, "UNSTORABLE": canaryValue + "\n" + canaryValue + `\`,
	}
	rep := vault.Import(e, entries, false)
	if !slices.Equal(rep.Imported, []string{"GOOD"}) || !slices.Equal(rep.Already, []string{"SAME"}) {
		t.Errorf("imported %q, already %q", rep.Imported, rep.Already)
	}
	wantRefused := map[string]string{
		"BAD-NAME":   `secret name "BAD-NAME" cannot be stored: use letters, digits and _, not starting with a digit`,
		"UNSTORABLE": "secret UNSTORABLE: the value cannot be stored in vault.env (it would not read back unchanged)",
	}
	if !maps.Equal(rep.Refused, wantRefused) {
		t.Errorf("refused = %q\nwant %q", rep.Refused, wantRefused)
	}
	if want := map[string]string{"DIFF": "the vault already holds another value (kept; --overwrite replaces it)"}; !maps.Equal(rep.Kept, want) {
		t.Errorf("kept = %q", rep.Kept)
	}
	if rep.Safe() {
		t.Error("a partial import reports safe")
	}
	if got, _ := e.Get("DIFF"); got != "vault value" {
		t.Errorf("DIFF was overwritten without --overwrite")
	}
	rep = vault.Import(e, map[string]string{"DIFF": "file value"}, true)
	if got, _ := e.Get("DIFF"); got != "file value" || !rep.Safe() {
		t.Errorf("--overwrite: DIFF = %q, report %+v", got, rep)
	}
}
