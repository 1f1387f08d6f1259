package dockerbash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// LabelSession and LabelOwner mark whose call a container is: the hush
// session, and the hush process that created it, as
// "<boot id>:<pid namespace>:<pid>:<start time>", which no other process
// can share (a pid alone is reused, and means another process in another
// PID namespace). RemoveLeftovers removes the containers of an owner that
// is gone.
const (
	LabelSession = "hush.session"
	LabelOwner   = "hush.owner"
)

// removeAttempt bounds one removal request; removeTimeout bounds them all.
const removeAttempt = 5 * time.Second

// owner is this process's LabelOwner value, "" if /proc cannot say.
func owner() string {
	return ownerOf(os.Getpid())
}

func ownerOf(pid int) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns := pidNamespace()
	start := startTime(pid)
	if ns == "" || start == "" {
		return ""
	}
	return strings.TrimSpace(string(boot)) + ":" + ns + ":" + strconv.Itoa(pid) + ":" + start
}

// pidNamespace names this process's PID namespace by its inode (the
// "pid:[N]" link's N): pids are only comparable inside one.
func pidNamespace() string {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
}

// startTime is field 22 of /proc/PID/stat: when the process started, in
// clock ticks since boot.
func startTime(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// ownerGone reports whether the hush that labelled a container is dead: the
// label names this machine's boot and this process's PID namespace, and
// that pid now is another process or none. A label from another boot or
// machine, or from another PID namespace (a hush in a container or a
// sandbox, whose pids mean other processes here, or none), is left alone:
// an engine may serve several machines and namespaces.
func ownerGone(label string) bool {
	parts := strings.Split(label, ":")
	if len(parts) != 4 {
		return false
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil || strings.TrimSpace(string(boot)) != parts[0] {
		return false
	}
	if ns := pidNamespace(); ns == "" || ns != parts[1] {
		return false
	}
	pid, err := strconv.Atoi(parts[2])
	if err != nil || pid <= 0 {
		return false
	}
	return startTime(pid) != parts[3]
}

type listedContainer struct {
	ID     string            `json:"Id"`
	Labels map[string]string `json:"Labels"`
	State  string            `json:"State"`
}

// containerList lists the containers, running or not, carrying label.
func (e *Engine) containerList(ctx context.Context, label string) ([]listedContainer, error) {
	filters, _ := json.Marshal(map[string][]string{"label": {label}})
	var out []listedContainer
	err := e.call(ctx, http.MethodGet, "/containers/json", url.Values{"all": {"1"}, "filters": {string(filters)}}, nil, &out)
	return out, err
}

// Leftover is a container a dead hush left behind.
type Leftover struct {
	ID, Session string
	// Err is why it could not be removed; nil when it was.
	Err error
}

// RemoveLeftovers removes the docker-bash containers whose hush is gone
// (killed, or cut off from the engine while a call ran), and then their
// calls' networks, on the engine named in ambient, and says which
// containers. A missing engine is not an error here:
// there is nothing to clean on it now.
func RemoveLeftovers(ctx context.Context, ambient map[string]string) []Leftover {
	cli, err := NewClient(ambient)
	if err != nil {
		return nil
	}
	defer cli.Close()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if cli.Ping(pctx) != nil {
		return nil
	}
	list, err := cli.containerList(ctx, LabelTool+"="+Name)
	if err != nil {
		return nil
	}
	var out []Leftover
	for _, c := range list {
		if !ownerGone(c.Labels[LabelOwner]) {
			continue
		}
		out = append(out, Leftover{ID: c.ID, Session: c.Labels[LabelSession], Err: removeContainer(ctx, cli, c.ID, 0)})
	}
	// The calls' own networks (network = "proxy"), once their containers
	// are gone: nothing runs on them, so they go without a word.
	filters, _ := json.Marshal(map[string][]string{"label": {LabelTool + "=" + Name}})
	var nets []listedContainer // the same fields: Id, Labels
	if cli.call(ctx, http.MethodGet, "/networks", url.Values{"filters": {string(filters)}}, nil, &nets) == nil {
		for _, n := range nets {
			if ownerGone(n.Labels[LabelOwner]) {
				_ = cli.call(ctx, http.MethodDelete, "/networks/"+url.PathEscape(n.ID), nil, nil, nil)
			}
		}
	}
	return out
}

// Describe is a leftover in one line, for hush's start-up notice.
func (l Leftover) Describe() string {
	id := l.ID
	if len(id) > 12 {
		id = id[:12]
	}
	session := ""
	if l.Session != "" {
		session = " of session " + l.Session
	}
	if l.Err != nil {
		return fmt.Sprintf("a docker-bash container%s that a hush which is gone left behind (%s) could not be removed: %v; remove it with `docker rm -f %s`", session, id, l.Err, id)
	}
	return fmt.Sprintf("removed a docker-bash container%s that a hush which is gone left behind (%s)", session, id)
}

// removeContainer force-removes the container (killing it if it runs) and
// waits until the engine no longer knows it, retrying — the engine may be
// restarting, or its socket briefly cut — for up to bound (zero:
// removeTimeout). It returns why the container may still exist, or nil
// once it does not.
func removeContainer(ctx context.Context, cli *Engine, id string, bound time.Duration) error {
	if bound <= 0 {
		bound = removeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var last error
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		actx, acancel := context.WithTimeout(ctx, removeAttempt)
		err := cli.ContainerRemove(actx, id)
		if err == nil || isNotFound(err) {
			acancel()
			return nil
		}
		var ae *apiError
		if errors.As(err, &ae) && strings.Contains(ae.message, "already in progress") {
			// AutoRemove is removing it: wait for that.
			waitC, errC := cli.ContainerWait(actx, id, "removed")
			select {
			case <-waitC:
				acancel()
				return nil
			case err = <-errC:
				if isNotFound(err) {
					acancel()
					return nil
				}
			}
		}
		acancel()
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("docker engine: %s", oneLine(errorText(last)))
		case <-time.After(delay):
		}
	}
}

func errorText(err error) string {
	if err == nil {
		return "no answer"
	}
	return err.Error()
}
