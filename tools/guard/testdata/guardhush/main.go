// Command guardhush stands in for hush in the early guard's test: built
// under the name "hush", it calls guard.Guard like hush's main does, then
// prints the snapshot Guard returned, one NAME=value per line, how Guard
// says the environment was hidden, and the path the kernel last exec'd it
// by (AT_EXECFN), which tells a re-exec (/proc/self/exe, or the resolved
// path) from none. It then waits for a line on stdin so the test can read
// its /proc/<pid>/environ.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"unsafe"

	"github.com/hushcli/hush/tools/guard"
	"golang.org/x/sys/unix"
)

// exitGuardFailed is the exit code when guard.Guard fails.
const exitGuardFailed = 1

func main() {
	env, err := guard.Guard()
	if err != nil {
		fmt.Println("guard error:", err)
		os.Exit(exitGuardFailed)
	}
	var lines []string
	for k, v := range env {
		lines = append(lines, k+"="+v)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println("env " + l)
	}
	fmt.Println("guarded " + guard.GuardedBy())
	fmt.Println("execfn " + execFn())
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// atExecFn is AT_EXECFN from <elf.h>: the address of the file name the
// process was exec'd by.
const atExecFn = 31

// execFn reads the AT_EXECFN string the kernel put on the initial stack.
func execFn() string {
	auxv, err := unix.Auxv()
	if err != nil {
		return "unknown: " + err.Error()
	}
	for _, kv := range auxv {
		if kv[0] == atExecFn {
			p := (*byte)(unsafe.Pointer(kv[1]))
			var b []byte
			for ; *p != 0; p = (*byte)(unsafe.Add(unsafe.Pointer(p), 1)) {
				b = append(b, *p)
			}
			return string(b)
		}
	}
	return "unknown"
}
