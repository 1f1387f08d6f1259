package main

import (
	"bytes"
	"strings"
	"testing"
)

// stream is go test -json output of three packages: one passing with a skip,
// one with a failing subtest, one that dies under a running test; plus a
// package with no tests and a check recorded by scripts/test.
const stream = `{"Action":"start","Package":"example/a"}
{"Action":"run","Package":"example/a","Test":"TestOK"}
{"Action":"output","Package":"example/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"example/a","Test":"TestOK","Output":"--- PASS: TestOK (0.20s)\n"}
{"Action":"pass","Package":"example/a","Test":"TestOK","Elapsed":0.2}
{"Action":"run","Package":"example/a","Test":"TestKeyring"}
{"Action":"output","Package":"example/a","Test":"TestKeyring","Output":"=== RUN   TestKeyring\n"}
{"Action":"output","Package":"example/a","Test":"TestKeyring","Output":"    keyring_test.go:64: needs secret-service: no Secret Service to test against\n"}
{"Action":"output","Package":"example/a","Test":"TestKeyring","Output":"--- SKIP: TestKeyring (0.00s)\n"}
{"Action":"skip","Package":"example/a","Test":"TestKeyring","Elapsed":0}
{"Action":"run","Package":"example/a","Test":"TestHelper"}
{"Action":"output","Package":"example/a","Test":"TestHelper","Output":"    x_test.go:9: helper process only\n"}
{"Action":"output","Package":"example/a","Test":"TestHelper","Output":"        and more\n"}
{"Action":"skip","Package":"example/a","Test":"TestHelper","Elapsed":0}
{"Action":"pass","Package":"example/a","Elapsed":1.5}
{"Action":"run","Package":"example/b","Test":"TestT"}
{"Action":"run","Package":"example/b","Test":"TestT/sub"}
{"Action":"output","Package":"example/b","Test":"TestT/sub","Output":"    b_test.go:3: want 1, got 2\n"}
{"Action":"fail","Package":"example/b","Test":"TestT/sub","Elapsed":0.1}
{"Action":"fail","Package":"example/b","Test":"TestT","Elapsed":0.1}
{"Action":"fail","Package":"example/b","Elapsed":0.3}
{"Action":"run","Package":"example/c","Test":"TestHang"}
{"Action":"output","Package":"example/c","Output":"panic: test timed out after 20m0s\n"}
{"Action":"fail","Package":"example/c","Elapsed":1200}
{"Action":"skip","Package":"example/d","Elapsed":0}
{"Action":"pass","Package":"checks","Test":"go vet","Elapsed":30}
not json: a go command's own complaint
`

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		name, require string
		last          string
		failures      int
		contains      []string
	}{
		{name: "local", last: "2 passed, 3 failed, 2 skipped", failures: 3, contains: []string{
			"ok   example/a 1.5s (1 passed, 0 failed, 2 skipped)\n",
			"FAIL example/b 0.3s (0 passed, 2 failed, 0 skipped)\n    b_test.go:3: want 1, got 2\n",
			"FAIL example/c 1200.0s (0 passed, 1 failed, 0 skipped)\n--- TestHang did not finish\n",
			"?    example/d [no test files]\n",
			"example/a TestKeyring: needs secret-service: no Secret Service to test against (keyring_test.go:64)\n",
			"example/a TestHelper: helper process only and more (x_test.go:9)\n",
			"not json: a go command's own complaint\n",
		}},
		{name: "ci", require: "docker,secret-service", last: "2 passed, 4 failed, 1 skipped", failures: 4, contains: []string{
			"FAIL example/a 1.5s (1 passed, 1 failed, 1 skipped)\n--- TestKeyring skipped, but secret-service is provisioned here (CI), so the skip is a failure\n",
		}},
		{name: "ci without that component", require: "docker", last: "2 passed, 3 failed, 2 skipped", failures: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s := newSummary(&out, tc.require)
			if err := s.read(strings.NewReader(stream)); err != nil {
				t.Fatal(err)
			}
			n := s.report()
			got := out.String()
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if lines[len(lines)-1] != tc.last || n != tc.failures {
				t.Errorf("last line %q, %d failures; want %q, %d\n%s", lines[len(lines)-1], n, tc.last, tc.failures, got)
			}
			for _, want := range tc.contains {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}
		})
	}
}
