package sandbox

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits bound one host tool call: a bash call, a background process or an
// MCP server, with everything it starts. The session sets them from the
// tool's [tools.NAME] max_processes and max_memory (default
// DefaultLimits); zero leaves one off. How this machine enforces them is
// LimitStatus's to say, and `hush sandbox show`'s to print.
type Limits struct {
	// Processes is the most processes (and threads) the call may have at
	// once; reaching it stops the call (LimitError).
	Processes int
	// Memory is the most memory, in bytes, the call's processes may take
	// together: hush adds them up and stops the call that passes it
	// (LimitError); each process also has an RLIMIT_DATA a quarter above
	// it, past which its allocations fail (dataLimit).
	Memory int64
	// Setting names where they come from in messages: "[tools.bash]".
	Setting string
}

// DefaultProcesses is max_processes when the config says nothing: far
// above what a build (make -j, a test runner's workers) starts, far below
// what exhausts a machine.
const DefaultProcesses = 4096

// DefaultLimits are the limits of a tool whose config says nothing: 4,096
// processes and half of this machine's memory (none where it cannot be
// read).
func DefaultLimits(setting string) Limits {
	return Limits{Processes: DefaultProcesses, Memory: int64(totalMemory() / 2), Setting: setting}
}

// flags is the plan's part for l (limits.c reads it): lower-case letters
// and digits, which nothing else in the flags word uses.
func (l Limits) flags() string {
	var b strings.Builder
	if l.Processes > 0 {
		b.WriteString("p" + strconv.Itoa(l.Processes))
	}
	if l.Memory > 0 {
		b.WriteString("m" + strconv.FormatInt(l.dataLimit(), 10))
	}
	return b.String()
}

// dataLimit is the RLIMIT_DATA of each process of a call limited to
// Memory: a quarter above it, so that a process growing toward the limit
// is seen by hush's watch (WatchLimits, ten times a second), which ends
// the call with one sentence, before its allocations start failing; an
// allocation that would take it past this at once still fails there.
func (l Limits) dataLimit() int64 { return l.Memory + l.Memory/4 }

// LimitError ends a call that reached one of its limits: its message is
// the one sentence the user and the model see.
type LimitError struct {
	Limits Limits
	// What was reached: "processes" (also when empty) or "memory".
	What string
}

func (e *LimitError) Error() string {
	setting := e.Limits.Setting
	if setting == "" {
		setting = "the tool's config"
	}
	if e.What == "memory" {
		return fmt.Sprintf("stopped: the call used more than its memory limit of %s (max_memory in %s), so hush ended it and everything it started",
			FormatBytes(e.Limits.Memory), setting)
	}
	return fmt.Sprintf("stopped: the call reached its limit of %s processes (max_processes in %s), so hush ended it and everything it started",
		thousands(int64(e.Limits.Processes)), setting)
}

// ParseMemory reads a max_memory setting: a size with a unit ("512MiB",
// "8GiB", "2G" — K, M, G and T are powers of 1024 with or without "iB"),
// a share of this machine's memory ("50%"), or "off" (0: no limit).
func ParseMemory(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "off" || t == "0" {
		return 0, nil
	}
	if pct, ok := strings.CutSuffix(t, "%"); ok {
		n, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || n <= 0 || n > 100 {
			return 0, fmt.Errorf("%q: want a share from 1%% to 100%% of memory, a size such as \"4GiB\", or \"off\"", s)
		}
		total := totalMemory()
		if total == 0 {
			return 0, errors.New("this machine's memory size cannot be read: give max_memory as a size such as \"4GiB\"")
		}
		return int64(float64(total) * n / 100), nil
	}
	upper := strings.ToUpper(t)
	upper = strings.TrimSuffix(strings.TrimSuffix(upper, "IB"), "B")
	shift := 0
	if upper != "" {
		switch upper[len(upper)-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
	}
	if shift > 0 {
		upper = upper[:len(upper)-1]
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(upper), 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a size such as \"512MiB\" or \"8GiB\", a share such as \"50%%\", or \"off\"", s)
	}
	v := n * float64(uint64(1)<<shift)
	if v < 16<<20 {
		return 0, fmt.Errorf("%q: below 16MiB nothing starts; want a size such as \"512MiB\", or \"off\"", s)
	}
	if v > 1<<62 {
		return 0, fmt.Errorf("%q: too large", s)
	}
	return int64(v), nil
}

// FormatBytes prints n as the largest whole-ish unit: "11.7 GiB".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i]
}

// thousands prints n with commas: 4,096.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// renderLimits prints the limits section of `hush sandbox show`.
func renderLimits(w io.Writer, sb *Config, st State) {
	fmt.Fprintln(w, "# limits per call")
	for _, p := range LimitStatus(sb.Limits, st) {
		mark := "on "
		if !p.On {
			mark = "OFF"
		}
		fmt.Fprintf(w, "%s  %-18s %s\n", mark, p.Name, p.Why)
	}
}
