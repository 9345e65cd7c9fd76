package fakellm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warrenhq/warren/internal/tomlfile"
)

// DefaultText is what the default rule answers: no calls, so a live agent's stage ends done.
const DefaultText = "I have nothing to add."

// Rules is a fake provider scripted by a file of [[reply]] rules rather than by Go code, for
// trying a live scenario by hand (host models serve-fake --rules FILE). Each request gets the
// answer of the first rule whose conditions all hold; a request no rule matches gets the
// default rule's answer, DefaultText with no calls. Rules never change once loaded, so one
// Rules serves concurrent requests.
//
// The file, every key optional:
//
//	[[reply]]
//	when_last_contains = "error"    # a substring of the last user or tool message
//	when_system_contains = "tester" # a substring of the system text
//	when_tool_offered = "read_file" # a tool the request offers
//	when_turn = 2                   # 1 + the assistant messages in the request
//	text = "Let me look."
//	delay = "250ms"                 # hold the answer this long
//	usage = {prompt = 120, completion = 30, cached = 64, cache_write = 0}
//	[[reply.calls]]
//	name = "read_file"
//	args = {path = "notes.md"}      # a TOML table, sent as the call's JSON arguments
//
//	[[reply]]
//	when_last_contains = "boom"
//	status = 429                    # fail with this status (400 to 599): no text or calls
//	retry_after = 2                 # with status: the Retry-After header, in seconds
//
// Without usage, the answer reports prompt tokens of the request's text bytes / 4 and
// completion tokens of the answer's bytes / 4, each rounded up (see EstimateUsage). A call's id
// is "call_<turn>_<i>" (turn as in when_turn, i from 1), unique within one conversation and the
// same whichever order concurrent agents' requests arrive in.
type Rules struct {
	rules []rule
}

// rule is one compiled [[reply]] rule.
type rule struct {
	lastContains, systemContains, toolOffered *string
	turn                                      int // 0: any turn
	text                                      string
	calls                                     []ToolCall // ids left to fill per request
	status                                    int
	retryAfter                                string
	delay                                     time.Duration
	usage                                     *Usage
}

// rulesFile is the file's shape, decoded strictly.
type rulesFile struct {
	Reply []ruleTable `toml:"reply"`
}

// ruleTable is one [[reply]] table.
type ruleTable struct {
	WhenLastContains   *string     `toml:"when_last_contains"`
	WhenSystemContains *string     `toml:"when_system_contains"`
	WhenToolOffered    *string     `toml:"when_tool_offered"`
	WhenTurn           *int        `toml:"when_turn"`
	Text               string      `toml:"text"`
	Calls              []callTable `toml:"calls"`
	Status             int         `toml:"status"`
	RetryAfter         *int        `toml:"retry_after"`
	Usage              *usageTable `toml:"usage"`
	Delay              string      `toml:"delay"`
}

// callTable is one [[reply.calls]] table.
type callTable struct {
	Name string         `toml:"name"`
	Args map[string]any `toml:"args"`
}

// usageTable is a rule's usage table.
type usageTable struct {
	Prompt     int `toml:"prompt"`
	Completion int `toml:"completion"`
	Cached     int `toml:"cached"`
	CacheWrite int `toml:"cache_write"`
}

// DefaultRules is the rule set of no file: every request is answered DefaultText, with no
// calls.
func DefaultRules() *Rules { return &Rules{} }

// LoadRules reads the rules file at path (DefaultRules when path is empty). Every problem in the
// file is reported at once, each as "file:line:col: key: message"; an unknown key's message
// lists the valid keys.
func LoadRules(path string) (*Rules, error) {
	if path == "" {
		return DefaultRules(), nil
	}
	data, err := tomlfile.Read(path)
	if err != nil {
		return nil, err
	}
	return ParseRules(path, data)
}

// StartRules serves, on a free loopback port, the fake answering by the rules file at path (""
// answers everything with the default reply), for a test that needs a provider.
func StartRules(path string) (*Server, error) {
	r, err := LoadRules(path)
	if err != nil {
		return nil, err
	}
	return Start(r.Reply)
}

// ParseRules reads a rules file's contents, naming it file in errors (see LoadRules).
func ParseRules(file string, data []byte) (*Rules, error) {
	var f rulesFile
	doc, err := tomlfile.Decode(file, data, &f)
	var problems tomlfile.Errors
	if err != nil {
		if doc == nil || !errors.As(err, &problems) || !onlyUnknownKeys(problems) {
			return nil, err // a syntax or type error: what decoded cannot be checked further
		}
	}
	rs := &Rules{}
	for i, t := range f.Reply {
		r, errs := t.compile(doc, tomlfile.JoinIndex("reply", i))
		problems = append(problems, errs...)
		rs.rules = append(rs.rules, r)
	}
	if len(problems) > 0 {
		problems.Sort()
		return nil, problems
	}
	return rs, nil
}

// onlyUnknownKeys reports whether every problem is an unknown key, after which the rest of the
// file decoded and can still be checked.
func onlyUnknownKeys(es tomlfile.Errors) bool {
	for _, e := range es {
		if !errors.Is(e, tomlfile.ErrUnknownKey) {
			return false
		}
	}
	return true
}

// compile checks one [[reply]] table, at path in doc.
func (t *ruleTable) compile(doc *tomlfile.Doc, path string) (rule, tomlfile.Errors) {
	var errs tomlfile.Errors
	bad := func(key, format string, args ...any) {
		errs = append(errs, doc.Errorf(path+"."+key, format, args...))
	}
	r := rule{lastContains: t.WhenLastContains, systemContains: t.WhenSystemContains, toolOffered: t.WhenToolOffered,
		text: t.Text, status: t.Status}
	for _, c := range []struct {
		key string
		v   *string
	}{{"when_last_contains", t.WhenLastContains}, {"when_system_contains", t.WhenSystemContains}, {"when_tool_offered", t.WhenToolOffered}} {
		if c.v != nil && *c.v == "" {
			bad(c.key, "an empty string matches every request; leave the key out")
		}
	}
	if t.WhenTurn != nil {
		if *t.WhenTurn < 1 {
			bad("when_turn", "%d: turns count from 1 (the first answer)", *t.WhenTurn)
		}
		r.turn = *t.WhenTurn
	}
	for i, c := range t.Calls {
		at := tomlfile.JoinIndex("calls", i)
		if strings.TrimSpace(c.Name) == "" {
			bad(at+".name", "missing: name the tool to call")
		}
		args := []byte("{}")
		if c.Args != nil {
			var err error
			if args, err = json.Marshal(c.Args); err != nil {
				bad(at+".args", "cannot be encoded as JSON: %v", err)
			}
		}
		r.calls = append(r.calls, ToolCall{Name: c.Name, Arguments: string(args)})
	}
	if t.Status != 0 {
		if t.Status < 400 || t.Status > 599 {
			bad("status", "%d: a failing answer's status is from 400 to 599 (leave status out to answer)", t.Status)
		}
		if t.Text != "" || len(t.Calls) > 0 {
			bad("status", "a failing answer has no text or calls; drop them or the status")
		}
	}
	if t.RetryAfter != nil {
		switch {
		case t.Status == 0:
			bad("retry_after", "is the Retry-After of a failing answer; set status too, e.g. status = 429")
		case *t.RetryAfter < 0:
			bad("retry_after", "%d: give a number of seconds, 0 or more", *t.RetryAfter)
		default:
			r.retryAfter = strconv.Itoa(*t.RetryAfter)
		}
	}
	if t.Delay != "" {
		d, err := time.ParseDuration(t.Delay)
		if err != nil || d < 0 {
			bad("delay", "%q: give a Go duration, e.g. \"250ms\"", t.Delay)
		}
		r.delay = d
	}
	if u := t.Usage; u != nil {
		if u.Prompt < 0 || u.Completion < 0 || u.Cached < 0 || u.CacheWrite < 0 {
			bad("usage", "token counts are 0 or more")
		}
		if u.Cached+u.CacheWrite > u.Prompt {
			bad("usage", "cached (%d) and cache_write (%d) are parts of prompt (%d)", u.Cached, u.CacheWrite, u.Prompt)
		}
		r.usage = &Usage{Prompt: u.Prompt, Completion: u.Completion, Cached: u.Cached, CacheWrite: u.CacheWrite}
	}
	return r, errs
}

// Reply answers the n-th request by the first rule that matches it (a Script: pass rs.Reply to
// Start or Listen).
func (rs *Rules) Reply(_ int, req Request) Reply {
	turn := Turn(req)
	for i := range rs.rules {
		if rs.rules[i].matches(req, turn) {
			return rs.rules[i].answer(req, turn)
		}
	}
	def := rule{text: DefaultText}
	return def.answer(req, turn)
}

// Turn is the answer a request asks for, from 1: one more than the assistant messages it
// carries (when_turn).
func Turn(req Request) int {
	turn := 1
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	return turn
}

// LastInput is the content of the request's last user or tool message (for Anthropic, whose
// tool results are blocks of a user message, its last user message), "" when it has none: what
// when_last_contains looks in.
func LastInput(req Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if r := req.Messages[i].Role; r == "user" || r == "tool" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// matches reports whether every condition of r holds for req, the turn-th answer.
func (r *rule) matches(req Request, turn int) bool {
	switch {
	case r.turn != 0 && r.turn != turn:
		return false
	case r.lastContains != nil && !strings.Contains(LastInput(req), *r.lastContains):
		return false
	case r.systemContains != nil && !strings.Contains(req.System, *r.systemContains):
		return false
	case r.toolOffered != nil && !slices.Contains(req.Tools, *r.toolOffered):
		return false
	}
	return true
}

// answer is r's reply to req, the turn-th answer: fresh calls with their ids, and the usage
// given or estimated.
func (r *rule) answer(req Request, turn int) Reply {
	reply := Reply{Text: r.text, Status: r.status, RetryAfter: r.retryAfter, Delay: r.delay}
	for i, c := range r.calls {
		c.ID = "call_" + strconv.Itoa(turn) + "_" + strconv.Itoa(i+1)
		reply.ToolCalls = append(reply.ToolCalls, c)
	}
	if r.usage != nil {
		reply.Usage = *r.usage
	} else {
		reply.Usage = EstimateUsage(req, reply)
	}
	return reply
}

// EstimateUsage is the usage a rule without one reports, deterministically: prompt tokens are
// the bytes of the request's text (the system text, every message's text, tool calls' names and
// arguments, tool results) / 4, completion tokens the bytes of the answer's text and calls / 4,
// each rounded up, with nothing cached.
func EstimateUsage(req Request, reply Reply) Usage {
	prompt := 0
	if req.Wire == WireAnthropic {
		prompt += len(req.System) // OpenAI's system text is in its messages
	}
	for _, m := range req.Messages {
		prompt += len(m.Content)
		for _, c := range m.ToolCalls {
			prompt += len(c.Name) + len(c.Arguments)
		}
	}
	completion := len(reply.Text)
	for _, c := range reply.ToolCalls {
		completion += len(c.Name) + len(c.Arguments)
	}
	return Usage{Prompt: (prompt + 3) / 4, Completion: (completion + 3) / 4}
}

// String describes the rule set in one line, for a server's banner.
func (rs *Rules) String() string {
	if len(rs.rules) == 0 {
		return fmt.Sprintf("the default rule: %q, no calls", DefaultText)
	}
	return fmt.Sprintf("%d rules, then the default rule (%q, no calls)", len(rs.rules), DefaultText)
}
