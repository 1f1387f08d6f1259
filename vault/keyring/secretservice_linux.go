//go:build linux

package keyring

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	dbus "github.com/godbus/dbus/v5"
)

func platformName() string { return "Secret Service (D-Bus)" }

// The Secret Service API (freedesktop.org), as go-keyring uses it.
const (
	ssName           = "org.freedesktop.secrets"
	ssPath           = dbus.ObjectPath("/org/freedesktop/secrets")
	ssService        = "org.freedesktop.Secret.Service"
	ssCollection     = "org.freedesktop.Secret.Collection"
	ssItem           = "org.freedesktop.Secret.Item"
	ssSession        = "org.freedesktop.Secret.Session"
	ssPrompt         = "org.freedesktop.Secret.Prompt"
	ssLoginPath      = dbus.ObjectPath("/org/freedesktop/secrets/collection/login")
	ssDefaultAlias   = dbus.ObjectPath("/org/freedesktop/secrets/aliases/default")
	dbusProperties   = "org.freedesktop.DBus.Properties"
	dbusServiceGone  = "org.freedesktop.DBus.Error.ServiceUnknown"
	dbusNameHasOwner = "org.freedesktop.DBus.NameHasOwner"
)

// callTimeout bounds each D-Bus call (a frozen keyring daemon answers none);
// promptTimeout bounds how long a person has to answer the keyring's unlock
// dialog, and applies only while one is shown.
const (
	callTimeout   = 25 * time.Second
	promptTimeout = 2 * time.Minute
)

// ssSecret is the Secret Service's (oayays) secret struct.
type ssSecret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// secretService is a Store on the Secret Service, reached at an address
// taken from hush's environment snapshot. Items carry the attributes
// go-keyring uses ("service", "username") and its label, so go-keyring and
// `secret-tool lookup service hush username NAME` find them.
type secretService struct {
	addr    string
	timeout time.Duration // per call
	mu      sync.Mutex
	conn    *dbus.Conn
}

func openStore(env map[string]string, timeout time.Duration) (Store, func() error, error) {
	if timeout <= 0 {
		timeout = callTimeout
	}
	addr, err := busAddress(env)
	if err != nil {
		return nil, nil, err
	}
	s := &secretService{addr: addr, timeout: timeout}
	conn, err := s.connect()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var owned bool
	err = conn.BusObject().CallWithContext(ctx, dbusNameHasOwner, 0, ssName).Store(&owned)
	if err == nil && !owned {
		// Not running is fine when the bus can start it on demand.
		var activatable []string
		err = conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&activatable)
		owned = err == nil && contains(activatable, ssName)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		_ = s.close()
		return nil, nil, &UnavailableError{Reason: fmt.Sprintf("the D-Bus session bus did not answer within %s", timeout)}
	}
	if err != nil || !owned {
		_ = s.close()
		return nil, nil, &UnavailableError{Reason: "no Secret Service (org.freedesktop.secrets) on the D-Bus session bus; start gnome-keyring or KeePassXC's Secret Service, or keep secrets in a file with the envfile backend", NamesEnvfile: true}
	}
	return s, s.close, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// busAddress is where the session bus is: DBUS_SESSION_BUS_ADDRESS from the
// snapshot, else the systemd-style socket in the runtime dir. Only unix and
// tcp transports are taken: godbus would start the program named by a
// "unixexec:" address, and "autolaunch:" starts dbus-launch; hush starts
// processes only through its spawn layer.
func busAddress(env map[string]string) (string, error) {
	if raw := env["DBUS_SESSION_BUS_ADDRESS"]; raw != "" {
		var usable []string
		for _, a := range strings.Split(raw, ";") {
			if strings.HasPrefix(a, "unix:") || strings.HasPrefix(a, "tcp:") {
				usable = append(usable, a)
			}
		}
		if len(usable) == 0 {
			return "", &UnavailableError{Reason: "DBUS_SESSION_BUS_ADDRESS names no unix or tcp address hush can connect to; use the envfile backend", NamesEnvfile: true}
		}
		return strings.Join(usable, ";"), nil
	}
	dirs := []string{}
	if d := env["XDG_RUNTIME_DIR"]; filepath.IsAbs(d) {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, "/run/user/"+strconv.Itoa(os.Getuid()))
	for _, d := range dirs {
		sock := filepath.Join(d, "bus")
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "unix:path=" + sock, nil
		}
	}
	return "", &UnavailableError{Reason: fmt.Sprintf("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and there is no %s); on a desktop, log in to a graphical session; otherwise use the envfile backend", filepath.Join(dirs[len(dirs)-1], "bus")), NamesEnvfile: true}
}

// connect returns the live connection, dialling again if it dropped.
func (s *secretService) connect() (*dbus.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && s.conn.Connected() {
		return s.conn, nil
	}
	var last error
	for _, a := range strings.Split(s.addr, ";") {
		conn, err := dbus.Connect(a)
		if err == nil {
			s.conn = conn
			return conn, nil
		}
		last = err
	}
	return nil, &UnavailableError{Reason: fmt.Sprintf("cannot connect to the D-Bus session bus: %v", last)}
}

func (s *secretService) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}

// op is one Store operation: a connection, its context, and the collection
// (unlocked) that holds hush's items.
type op struct {
	conn       *dbus.Conn
	ctx        context.Context
	timeout    time.Duration // per call
	collection dbus.BusObject
}

// call makes one D-Bus call bounded by the per-call timeout (within the
// operation's own bound), so a daemon that stopped answering costs the
// time the message names, not the whole operation's allowance.
func (o *op) call(obj dbus.BusObject, method string, args ...any) *dbus.Call {
	ctx, cancel := context.WithTimeout(o.ctx, o.timeout)
	defer cancel()
	c := obj.CallWithContext(ctx, method, 0, args...)
	if c.Err != nil && ctx.Err() != nil {
		c.Err = fmt.Errorf("no answer within %s (is the keyring daemon running and not stopped?)", o.timeout)
	}
	return c
}

// opContext bounds a whole operation: a few calls and at most one prompt.
func (s *secretService) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 8*s.timeout+promptTimeout)
}

func (s *secretService) begin(ctx context.Context) (*op, error) {
	conn, err := s.connect()
	if err != nil {
		return nil, err
	}
	o := &op{conn: conn, ctx: ctx, timeout: s.timeout}
	// go-keyring's choice, so both use the same collection: "login" when it
	// exists, else whatever the default alias points at.
	path := ssDefaultAlias
	var cols dbus.Variant
	if err := o.call(o.service(), dbusProperties+".Get", ssService, "Collections").Store(&cols); err != nil {
		return nil, wrapDBus(err)
	}
	if paths, ok := cols.Value().([]dbus.ObjectPath); ok && containsPath(paths, ssLoginPath) {
		path = ssLoginPath
	}
	o.collection = conn.Object(ssName, path)
	if err := o.unlock(path); err != nil {
		return nil, err
	}
	return o, nil
}

func containsPath(list []dbus.ObjectPath, p dbus.ObjectPath) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

func (o *op) service() dbus.BusObject { return o.conn.Object(ssName, ssPath) }

// unlock unlocks an object; the service may answer with a prompt (a dialog
// asking for the keyring password), which is shown and waited for.
func (o *op) unlock(path dbus.ObjectPath) error {
	var unlocked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	if err := o.call(o.service(), ssService+".Unlock", []dbus.ObjectPath{path}).Store(&unlocked, &prompt); err != nil {
		return wrapDBus(err)
	}
	if prompt != "/" {
		dismissed, _, err := o.prompt(prompt)
		if err != nil {
			return err
		}
		if dismissed {
			return fmt.Errorf("%w: the unlock prompt was dismissed", ErrLocked)
		}
	}
	return nil
}

// prompt shows a Secret Service prompt and waits for its Completed signal.
func (o *op) prompt(path dbus.ObjectPath) (bool, dbus.Variant, error) {
	match := []dbus.MatchOption{dbus.WithMatchObjectPath(path), dbus.WithMatchInterface(ssPrompt), dbus.WithMatchMember("Completed")}
	mctx, cancel := context.WithTimeout(o.ctx, o.timeout)
	defer cancel()
	if err := o.conn.AddMatchSignalContext(mctx, match...); err != nil {
		return false, dbus.Variant{}, wrapDBus(err)
	}
	defer func() { _ = o.conn.RemoveMatchSignal(match...) }()
	ch := make(chan *dbus.Signal, 8)
	o.conn.Signal(ch)
	defer o.conn.RemoveSignal(ch)
	p := o.conn.Object(ssName, path)
	if err := o.call(p, ssPrompt+".Prompt", "").Err; err != nil {
		return false, dbus.Variant{}, wrapDBus(err)
	}
	timer := time.NewTimer(promptTimeout)
	defer timer.Stop()
	for {
		select {
		case sig := <-ch:
			if sig == nil || sig.Path != path || sig.Name != ssPrompt+".Completed" || len(sig.Body) < 2 {
				continue
			}
			dismissed, _ := sig.Body[0].(bool)
			result, _ := sig.Body[1].(dbus.Variant)
			return dismissed, result, nil
		case <-timer.C:
			_ = o.call(p, ssPrompt+".Dismiss").Err
			return true, dbus.Variant{}, fmt.Errorf("%w: nobody answered the unlock prompt within %s", ErrLocked, promptTimeout)
		}
	}
}

func (o *op) find(service, user string) ([]dbus.ObjectPath, error) {
	var items []dbus.ObjectPath
	attrs := map[string]string{"service": service, "username": user}
	if err := o.call(o.collection, ssCollection+".SearchItems", attrs).Store(&items); err != nil {
		return nil, wrapDBus(err)
	}
	return items, nil
}

// session opens a "plain" session: the secret crosses the local socket
// unencrypted, as with go-keyring; the socket is the user's own.
func (o *op) session() (dbus.ObjectPath, func(), error) {
	var out dbus.Variant
	var path dbus.ObjectPath
	if err := o.call(o.service(), ssService+".OpenSession", "plain", dbus.MakeVariant("")).Store(&out, &path); err != nil {
		return "", nil, wrapDBus(err)
	}
	return path, func() { _ = o.call(o.conn.Object(ssName, path), ssSession+".Close").Err }, nil
}

func (s *secretService) Get(service, user string) (string, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	o, err := s.begin(ctx)
	if err != nil {
		return "", err
	}
	items, err := o.find(service, user)
	if err != nil {
		return "", err
	}
	if len(items) == 0 {
		return "", errNoItem
	}
	sess, closeSession, err := o.session()
	if err != nil {
		return "", err
	}
	defer closeSession()
	if err := o.unlock(items[0]); err != nil {
		return "", err
	}
	var sec ssSecret
	if err := o.call(o.conn.Object(ssName, items[0]), ssItem+".GetSecret", sess).Store(&sec); err != nil {
		return "", wrapDBus(err)
	}
	return string(sec.Value), nil
}

func (s *secretService) Set(service, user, value string) error {
	ctx, cancel := s.opContext()
	defer cancel()
	o, err := s.begin(ctx)
	if err != nil {
		return err
	}
	sess, closeSession, err := o.session()
	if err != nil {
		return err
	}
	defer closeSession()
	props := map[string]dbus.Variant{
		ssItem + ".Label":      dbus.MakeVariant(fmt.Sprintf("Password for '%s' on '%s'", user, service)),
		ssItem + ".Attributes": dbus.MakeVariant(map[string]string{"service": service, "username": user}),
	}
	sec := ssSecret{Session: sess, Parameters: []byte{}, Value: []byte(value), ContentType: "text/plain; charset=utf8"}
	var item, prompt dbus.ObjectPath
	// replace = true: an item with the same attributes is overwritten.
	if err := o.call(o.collection, ssCollection+".CreateItem", props, sec, true).Store(&item, &prompt); err != nil {
		return wrapDBus(err)
	}
	if prompt != "/" {
		if dismissed, _, err := o.prompt(prompt); err != nil {
			return err
		} else if dismissed {
			return fmt.Errorf("%w: the prompt to store the secret was dismissed", ErrLocked)
		}
	}
	return nil
}

func (s *secretService) Delete(service, user string) error {
	ctx, cancel := s.opContext()
	defer cancel()
	o, err := s.begin(ctx)
	if err != nil {
		return err
	}
	items, err := o.find(service, user)
	if err != nil {
		return err
	}
	for _, it := range items {
		var prompt dbus.ObjectPath
		if err := o.call(o.conn.Object(ssName, it), ssItem+".Delete").Store(&prompt); err != nil {
			return wrapDBus(err)
		}
		if prompt != "/" {
			if dismissed, _, err := o.prompt(prompt); err != nil {
				return err
			} else if dismissed {
				return fmt.Errorf("%w: the prompt to delete the secret was dismissed", ErrLocked)
			}
		}
	}
	return nil
}

// wrapDBus turns a D-Bus failure into one sentence. Errors from the Secret
// Service name objects and methods, never secret values (values travel only
// in requests and in GetSecret's reply).
func wrapDBus(err error) error {
	var de dbus.Error
	if errors.As(err, &de) {
		if de.Name == dbusServiceGone {
			return &UnavailableError{Reason: fmt.Sprintf("the Secret Service went away (%s)", de.Name)}
		}
		if strings.HasSuffix(de.Name, ".IsLocked") {
			return fmt.Errorf("%w (%s)", ErrLocked, de.Name)
		}
		msg := de.Name
		if len(de.Body) > 0 {
			if s, ok := de.Body[0].(string); ok && s != "" {
				msg += ": " + s
			}
		}
		return fmt.Errorf("secret service: %s", msg)
	}
	var dep *dbus.Error
	if errors.As(err, &dep) {
		return wrapDBus(*dep)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("secret service: the operation did not finish in time")
	}
	return fmt.Errorf("secret service: %w", err)
}
