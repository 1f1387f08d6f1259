package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// forbidden are the calls that start a process or read or write the process
// environment. Only the spawn layer (the files of package tools itself, the
// sandbox in tools/sandbox and hush's self-guard in tools/guard, and the start-up TERM guard in tools/termquiet) may use
// them; tests are exempt.
var forbidden = map[string][]string{
	"os":                    {"Setenv", "Unsetenv", "Clearenv", "Environ", "StartProcess", "Getenv", "LookupEnv", "ExpandEnv"},
	"os/exec":               {"Command", "CommandContext"},
	"syscall":               {"Exec", "ForkExec", "StartProcess", "Setenv", "Environ", "Getenv"},
	"golang.org/x/sys/unix": {"Exec"},
}

func TestOnlyTheSpawnLayerStartsProcesses(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	violations, checked, err := scanForSpawns(root, spawnLayer(root)...)
	if err != nil {
		t.Fatal(err)
	}
	if checked < 3 {
		t.Fatalf("checked %d Go files outside the spawn layer; the walk is broken", checked)
	}
	for _, v := range violations {
		t.Errorf("%s is outside the spawn layer (tools/*.go, tools/sandbox, tools/guard, tools/termquiet); build the child with tools.Command and tools.BuildEnv, and read the environment from hush's snapshot", v)
	}
}

// TestArchCheckCatchesAViolation proves the check can fail: it plants files
// that start processes in a temporary tree, one under a renamed import and
// one in a subpackage of the spawn dir, and scans it.
func TestArchCheckCatchesAViolation(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("x/x.go", "package x\nimport (\n\tx \"os/exec\"\n\t\"os\"\n)\nfunc f() { x.Command(\"env\"); _ = os.Environ() }\n")
	write("tools/bash/b.go", "package bash\nimport \"syscall\"\nvar _ = syscall.Exec\n")
	write("tools/spawn.go", "package tools\nimport \"os/exec\"\nvar _ = exec.Command\n")
	write("tools/sandbox/s.go", "package sandbox\nimport \"os/exec\"\nvar _ = exec.Command\n")
	write("x/x_test.go", "package x\nimport \"os\"\nvar _ = os.Setenv\n")
	got, checked, err := scanForSpawns(root, spawnLayer(root)...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tools/bash/b.go:3: syscall.Exec", "x/x.go:6: os/exec.Command", "x/x.go:6: os.Environ"}
	if checked != 2 || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("scan = %q (checked %d files), want %q (2 files)", got, checked, want)
	}
}

// spawnLayer are the directories whose files may start processes.
func spawnLayer(root string) []string {
	return []string{filepath.Join(root, "tools"), filepath.Join(root, "tools", "sandbox"), filepath.Join(root, "tools", "guard"), filepath.Join(root, "tools", "termquiet")}
}

// scanForSpawns lists every use of a forbidden call in non-test Go files
// under root, except in the files directly inside one of exempt.
func scanForSpawns(root string, exempt ...string) (violations []string, checked int, err error) {
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || slices.Contains(exempt, filepath.Dir(path)) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		local := map[string]string{} // local name -> import path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if _, ok := forbidden[p]; !ok {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			p, ok := local[id.Name]
			if !ok {
				return true
			}
			for _, fn := range forbidden[p] {
				if sel.Sel.Name == fn {
					rel, _ := filepath.Rel(root, path)
					violations = append(violations, filepath.ToSlash(rel)+":"+strconv.Itoa(fset.Position(sel.Pos()).Line)+": "+p+"."+fn)
				}
			}
			return true
		})
		return nil
	})
	return violations, checked, err
}

// TestSandboxImportsNothingOfTools keeps the sandbox a package apart: it
// takes a narrow start request from the spawn layer and must not reach
// back into it (the spawn contract, the environment builder), so that what
// contains a tool can be read, and tested, on its own.
func TestSandboxImportsNothingOfTools(t *testing.T) {
	got, err := importsOf(filepath.Join("sandbox"), "github.com/hushcli/hush/tools")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("tools/sandbox imports %q; it must import nothing of github.com/hushcli/hush/tools", got)
	}
	// The check can fail: the spawn layer itself imports the sandbox.
	if got, err := importsOf(".", "github.com/hushcli/hush/tools/sandbox"); err != nil || len(got) == 0 {
		t.Fatalf("control: tools does not import tools/sandbox (%v)", err)
	}
}

// importsOf lists the imports of the non-test Go files in dir that are
// prefix or below it.
func importsOf(dir, prefix string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == prefix || strings.HasPrefix(p, prefix+"/") {
				out = append(out, e.Name()+": "+p)
			}
		}
	}
	return out, nil
}
