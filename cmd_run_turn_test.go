package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/session/sessiontest"
)

func testRun(t *testing.T, script string, out *bytes.Buffer, closed *int) runTurn {
	return runTurn{Stdout: out, Stderr: out, JSON: true,
		Start: func(ev executor.Events, _ *transcript.Session) (*executor.Agent, func(), error) {
			a := sessiontest.OneTurnAgent(t, script)
			a.Session = "s-run"
			a.Events = ev
			return a, func() { *closed++ }, nil
		},
		ModelName:      func() string { return "replay-model" },
		TranscriptPath: func(id string) string { return "/data/" + id + ".jsonl" },
	}
}

func TestRunTurnOnceStreamsOneTurn(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	closed := 0
	res := testRun(t, `{"steps":[{"text":"hi from the model"}]}`, &out, &closed).Once("hello")
	if res.Kind != "" || res.Err != nil || res.Signal != nil || res.Stream == nil || closed != 1 {
		t.Errorf("result %+v, closed %d", res, closed)
	}
	for _, want := range []string{`"session.started"`, `"s-run"`, `replay-model`, `/data/s-run.jsonl`, "hi from the model"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the stream lacks %s:\n%s", want, out.String())
		}
	}
}

func TestRunTurnOnceReportsDenialAndStartErrors(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	closed := 0
	res := testRun(t, `{"steps":[{"tool_calls":[{"name":"bash","args":{"script":"true"}}]},{"text":"done"}]}`, &out, &closed).Once("run it")
	if res.Kind != events.KindDenied || res.Err == nil {
		t.Errorf("a denied turn: %+v", res)
	}
	want := errors.New("no such session")
	r := testRun(t, "", &out, &closed)
	r.Resume = session.Resume{Continue: true}
	r.Find = func(session.Resume) (*transcript.Session, error) { return nil, want }
	if res := r.Once("x"); res.Kind != events.KindConfig || res.Err != want {
		t.Errorf("a failed resume: %+v", res)
	}
	r = testRun(t, "", &out, &closed)
	r.Start = func(executor.Events, *transcript.Session) (*executor.Agent, func(), error) { return nil, nil, want }
	if res := r.Once("x"); res.Kind != events.KindConfig || res.Err != want {
		t.Errorf("a failed start: %+v", res)
	}
}
