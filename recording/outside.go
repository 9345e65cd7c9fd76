package recording

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/warrenhq/warren/tools"
)

// Op is one request a script tool made of the world outside the run (a host function, or a tool
// it called that leaves the world), in the order it made them: a tool entry's "ops".
type Op struct {
	// Fn is the host function (readFile, httpGet, ...) or "tool:<name>" for a called tool.
	Fn string `json:"fn"`
	// Request is the hash of what was asked (RequestText's).
	Request string `json:"request"`
	// Out is what the request returned, as JSON (for a secret, the hash of the value); Err the
	// error's text when it failed.
	Out    json.RawMessage `json:"out,omitempty"`
	Err    string          `json:"err,omitempty"`
	Secret bool            `json:"secret,omitempty"`
	// RealTime marks an error a limit measured in real time decided (an HTTP timeout): a replay
	// gives it back with the mark, so the call's notes say so again.
	RealTime bool `json:"realtime,omitempty"`
}

// realTimeError is a recorded error that a real-time limit decided (tools.IsRealTime).
type realTimeError struct{ msg string }

func (e realTimeError) Error() string { return e.msg }
func (realTimeError) RealTime() bool  { return true }

// hashText is the hash a request or a secret is kept as.
func hashText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Recorder is the tools.Outside of one call of a recorded run: it lets every request out and
// keeps what came back.
type Recorder struct {
	mu  sync.Mutex
	ops []Op
}

var _ tools.Outside = (*Recorder)(nil)

// Do implements tools.Outside.
func (r *Recorder) Do(fn, request string, out any, live func() error) error {
	err := live()
	op := Op{Fn: fn, Request: hashText(request)}
	if err != nil {
		op.Err, op.RealTime = err.Error(), tools.IsRealTime(err)
	} else if raw, merr := json.Marshal(out); merr == nil {
		op.Out = raw
	} else {
		op.Err = "the recording could not keep the result: " + merr.Error()
	}
	r.add(op)
	return err
}

// Secret implements tools.Outside.
func (r *Recorder) Secret(fn, request string, live func() (string, error)) (string, error) {
	v, err := live()
	op := Op{Fn: fn, Request: hashText(request), Secret: true}
	if err != nil {
		op.Err = err.Error()
	} else {
		op.Out, _ = json.Marshal(hashText(v))
	}
	r.add(op)
	return v, err
}

func (r *Recorder) add(op Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// Ops returns the requests recorded so far, in order.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops
}

// Player is the tools.Outside of one call of a replay: it answers each request from the call's
// recorded ops, in order, and fails a request that differs (and every later one) instead of
// letting it out. The world reads Err when it files the call's result, so the divergence it
// reports does not depend on which worker ran first.
type Player struct {
	// Tick and Call are the replayed call; Ops what it asked when it was recorded.
	Tick uint64
	Call Call
	Ops  []Op

	mu   sync.Mutex
	next int
	err  error
}

// Err is the first divergence of the call's requests (nil while they match the recording).
func (p *Player) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

var _ tools.Outside = (*Player)(nil)

// take returns the next recorded op if it is fn asking request, or the divergence.
func (p *Player) take(fn, request string) (Op, error) {
	p.mu.Lock()
	if p.err != nil {
		err := p.err
		p.mu.Unlock()
		return Op{}, err // the call has left its recording: every later request fails the same way
	}
	n := p.next
	p.next++
	var op Op
	detail := ""
	switch {
	case n >= len(p.Ops):
		detail = fmt.Sprintf("request %d of the call (%s) is not in the recording, which has %d", n+1, fn, len(p.Ops))
	case p.Ops[n].Fn != fn:
		detail = fmt.Sprintf("request %d of the call is %s; the recording's is %s", n+1, fn, p.Ops[n].Fn)
	case p.Ops[n].Request != hashText(request):
		detail = fmt.Sprintf("request %d of the call (%s) asks something else than the recording's", n+1, fn)
	default:
		op = p.Ops[n]
	}
	p.mu.Unlock()
	if detail != "" {
		return Op{}, p.diverged(detail)
	}
	return op, nil
}

// diverged records the call's first divergence and returns it.
func (p *Player) diverged(detail string) error {
	p.mu.Lock()
	if p.err == nil {
		p.err = &DivergenceError{Tick: p.Tick, Call: p.Call, Detail: detail}
	}
	err := p.err
	p.mu.Unlock()
	return err
}

// Do implements tools.Outside.
func (p *Player) Do(fn, request string, out any, _ func() error) error {
	op, err := p.take(fn, request)
	if err != nil {
		return err
	}
	if op.Err != "" {
		if op.RealTime {
			return realTimeError{op.Err}
		}
		return errors.New(op.Err)
	}
	if err := json.Unmarshal(op.Out, out); err != nil {
		return p.diverged(fmt.Sprintf("the recorded result of %s does not decode: %v", fn, err))
	}
	return nil
}

// Secret implements tools.Outside.
func (p *Player) Secret(fn, request string, live func() (string, error)) (string, error) {
	op, err := p.take(fn, request)
	if err != nil {
		return "", err
	}
	v, liveErr := live()
	var want string
	_ = json.Unmarshal(op.Out, &want)
	switch {
	case (liveErr == nil) != (op.Err == ""):
		return "", p.diverged(fmt.Sprintf("%s %s: the recorded run got %s, this replay %s", fn, request, outcome(op.Err), outcome(errText(liveErr))))
	case liveErr == nil && hashText(v) != want:
		return "", p.diverged(fmt.Sprintf("%s %s has another value than in the recorded run (the recording keeps only its hash)", fn, request))
	}
	return v, liveErr
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func outcome(err string) string {
	if err == "" {
		return "a value"
	}
	return "an error (" + err + ")"
}
