package tools

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layers is DESIGN.md's order of hush's packages, lowest first: a package
// may import a package of a lower rank or of its own group (a folder and
// its subfolders, e.g. executor/events -> executor), nothing else. Groups
// of one rank (the process tools; ui, wizard and selftest) import none of
// each other. A package not in the table fails the test: place it.
var layers = []struct {
	rank   int
	groups []string
}{
	{0, []string{"config"}},
	{1, []string{"vault"}},
	{2, []string{"tools/sandbox"}}, // imports nothing of tools (STYLE)
	{3, []string{"tools"}},         // the spawn contract: tools' root files
	{4, []string{"tools/guard"}},
	{5, []string{"executor"}},
	{6, []string{"toolset/bash", "toolset/background", "toolset/dockerbash", "toolset/files", "toolset/http", "toolset/mcp"}},
	{7, []string{"session"}},
	{8, []string{"ui", "wizard", "selftest"}}, // imported by main only
	{9, []string{"."}},                        // package main
	{10, []string{"tests", "scripts"}},        // end-to-end tests run the binary; scripts' helpers
}

// layerExceptions are the edges that break the order today, each with why.
// The test fails when one is no longer needed, so the list only shrinks.
var layerExceptions = map[string]string{}

func TestLayering(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	edges, err := moduleImports(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(edges) < 20 {
		t.Fatalf("found %d packages in the module; the walk is broken", len(edges))
	}
	violations, unplaced := checkLayers(edges)
	for _, p := range unplaced {
		t.Errorf("package %s is not in the layering table (tools/layering_test.go): place it in DESIGN.md's order", p)
	}
	for _, v := range violations {
		if _, ok := layerExceptions[v]; !ok {
			t.Errorf("%s breaks the layering (config <- vault <- tools <- executor <- toolset/* <- session <- main; ui, wizard, selftest <- main)", v)
		}
	}
	for e, why := range layerExceptions {
		if !slices.Contains(violations, e) {
			t.Errorf("the exception %q (%s) is no longer needed: delete it from layerExceptions", e, why)
		}
	}
	// A folder stands for its subfolders: the spawn contract (tools/) sits
	// below executor and the tools themselves (toolset/) above it, so no
	// folder is on both sides.
	for _, c := range folderCycles(edges) {
		t.Errorf("folder-level import cycle between %s", c)
	}
}

// TestLayeringCatchesAViolation is the checks' positive control: an edge
// list with a planted downward import, a same-rank import, an unplaced
// package and a folder cycle through a subfolder.
func TestLayeringCatchesAViolation(t *testing.T) {
	edges := map[string][]string{
		"config":            {"config/atomicfile"},
		"vault":             {"config", "executor"}, // up
		"executor":          {"tools", "vault"},
		"executor/events":   {"executor"},
		"toolset/bash":      {"executor", "toolset/http"}, // same rank, another group
		"toolset/http":      {"executor"},
		"session":           {"ui", "toolset/bash"},
		"gadget":            {"config"}, // not placed
		"config/atomicfile": nil,
	}
	violations, unplaced := checkLayers(edges)
	if want := []string{"session -> ui", "toolset/bash -> toolset/http", "vault -> executor"}; !slices.Equal(violations, want) {
		t.Errorf("violations %q, want %q", violations, want)
	}
	if !slices.Equal(unplaced, []string{"gadget"}) {
		t.Errorf("unplaced %q, want [gadget]", unplaced)
	}
	if got, want := folderCycles(edges), []string{"executor vault"}; !slices.Equal(got, want) {
		t.Errorf("folder cycles %q, want %q", got, want)
	}
	// A cycle through a subfolder: a tool put back under tools/ (beside the
	// spawn contract executor imports) is one.
	if got := folderCycles(map[string][]string{"executor": {"tools"}, "tools/bash": {"executor"}}); !slices.Equal(got, []string{"executor tools"}) {
		t.Errorf("a cycle through a subfolder: %q", got)
	}
}

// rankOf is the rank and group of pkg (a path inside the module, "." for
// the root): the longest group that is pkg or a folder above it.
func rankOf(pkg string) (rank int, group string, ok bool) {
	best := -1
	for _, l := range layers {
		for _, g := range l.groups {
			if (pkg == g || g != "." && strings.HasPrefix(pkg, g+"/")) && len(g) > best {
				best, rank, group, ok = len(g), l.rank, g, true
			}
		}
	}
	return rank, group, ok
}

// checkLayers lists the edges "a -> b" the table forbids, sorted, and the
// packages it does not place.
func checkLayers(edges map[string][]string) (violations, unplaced []string) {
	seen := map[string]bool{}
	for from, tos := range edges {
		for _, p := range append([]string{from}, tos...) {
			if _, _, ok := rankOf(p); !ok && !seen[p] {
				seen[p] = true
				unplaced = append(unplaced, p)
			}
		}
		fr, fg, ok := rankOf(from)
		if !ok {
			continue
		}
		for _, to := range tos {
			tr, tg, ok := rankOf(to)
			if ok && tg != fg && tr >= fr {
				violations = append(violations, from+" -> "+to)
			}
		}
	}
	slices.Sort(violations)
	slices.Sort(unplaced)
	return violations, unplaced
}

// folderCycles finds import cycles between folders, where a folder stands
// for its packages and its subfolders' (vault -> config/atomicfile is an
// edge vault -> config). Edges inside one folder tree are ignored. Each
// cycle is its folders, sorted, joined by spaces.
func folderCycles(edges map[string][]string) []string {
	graph := map[string]map[string]bool{}
	for from, tos := range edges {
		for _, to := range tos {
			for _, a := range folders(from) {
				for _, b := range folders(to) {
					if a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/") {
						continue
					}
					if graph[a] == nil {
						graph[a] = map[string]bool{}
					}
					graph[a][b] = true
				}
			}
		}
	}
	// Tarjan's strongly connected components.
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out []string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range sortedSet(graph[v]) {
			if _, ok := index[w]; !ok {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			if len(scc) > 1 {
				slices.Sort(scc)
				out = append(out, strings.Join(scc, " "))
			}
		}
	}
	var nodes []string
	for n := range graph {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		if _, ok := index[n]; !ok {
			visit(n)
		}
	}
	slices.Sort(out)
	return out
}

// folders is pkg and every folder above it ("tools/mcp" -> tools/mcp,
// tools); the module root is none.
func folders(pkg string) []string {
	var out []string
	for p := pkg; p != "." && p != "" && p != "/"; p = path.Dir(p) {
		out = append(out, p)
	}
	return out
}

func sortedSet(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// moduleImports reads the imports of every non-test Go file under root and
// returns, for each package dir (relative, "." for the root), the module's
// own packages it imports.
func moduleImports(root string) (map[string][]string, error) {
	mod, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	sets := map[string]map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if sets[rel] == nil {
			sets[rel] = map[string]bool{}
		}
		for _, im := range f.Imports {
			ip, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			if ip == mod {
				sets[rel]["."] = true
			} else if rest, ok := strings.CutPrefix(ip, mod+"/"); ok {
				sets[rel][rest] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	edges := map[string][]string{}
	for from, set := range sets {
		edges[from] = sortedSet(set)
	}
	return edges, nil
}

func modulePath(goMod string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s names no module", goMod)
}

// testSupport are the packages that exist for tests: their functions are
// called only from _test.go files, so deadcode, which starts from main,
// lists them all (scripts/deadcode leaves them out for that reason).
var testSupport = []string{"session/sessiontest", "toolset/mcp/oauthtest", "vault/echotest", "vault/keyring/keyringtest"}

// TestTestSupportOnlyInTests: no package of hush's own imports a test
// support package (moduleImports reads no _test.go file), and every
// package named …test is in testSupport.
func TestTestSupportOnlyInTests(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	edges, err := moduleImports(root)
	if err != nil {
		t.Fatal(err)
	}
	if bad := testSupportImports(edges); len(bad) > 0 {
		t.Errorf("test support packages imported outside tests: %q", bad)
	}
	for pkg := range edges {
		if strings.HasSuffix(pkg, "test") && pkg != "selftest" && !slices.Contains(testSupport, pkg) { // selftest is hush audit
			t.Errorf("package %s looks like test support: add it to testSupport (tools/layering_test.go) and scripts/deadcode, or rename it", pkg)
		}
	}
	for _, p := range testSupport {
		if _, ok := edges[p]; !ok {
			t.Errorf("test support package %s is gone: drop it from testSupport and scripts/deadcode", p)
		}
	}
}

// testSupportImports are the edges from a package of the module to a test
// support package that is not itself test support.
func testSupportImports(edges map[string][]string) []string {
	var bad []string
	for from, tos := range edges {
		for _, to := range tos {
			if slices.Contains(testSupport, to) && !slices.Contains(testSupport, from) {
				bad = append(bad, from+" -> "+to)
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestTestSupportImportsCatchesOne is the control: a planted import of
// one is found.
func TestTestSupportImportsCatchesOne(t *testing.T) {
	edges := map[string][]string{"session": {"config", "session/sessiontest"}, "session/sessiontest": {"executor"}}
	if got := testSupportImports(edges); !slices.Equal(got, []string{"session -> session/sessiontest"}) {
		t.Errorf("got %q", got)
	}
}
