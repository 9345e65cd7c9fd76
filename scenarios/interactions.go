package scenarios

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// Interaction is one scripted answer of a scenario's [[interactions]]: which prompts it answers
// (glob patterns on agent name, tool and key), what it answers, after how many ticks, and how
// many times.
type Interaction struct {
	Where            string
	Agent, Tool, Key string
	// Approve is the answer to an approval prompt (deny, once, stage, run); Reply the answer to
	// a question. Exactly one is set.
	Approve, Reply string
	Delay          uint64
	// Times bounds how many prompts the entry answers (0: any number).
	Times int
}

// matches reports whether the entry answers req.
func (in *Interaction) matches(req *gate.PromptRequest) bool {
	if (req.Kind == gate.PromptQuestion) != (in.Reply != "") {
		return false
	}
	if !glob(in.Agent, req.Agent) || !glob(in.Tool, req.Tool) {
		return false
	}
	if in.Key == "*" || in.Key == "" {
		return true
	}
	for _, k := range req.Keys {
		if glob(in.Key, k) {
			return true
		}
	}
	return false
}

// glob matches name against a path.Match pattern ("" and "*" match anything).
func glob(pattern, name string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// script answers prompts from a scenario's interactions: the first entry, in file order, that
// matches and has uses left. It lives for one run.
type script struct {
	entries []Interaction
	used    []int
}

var _ gate.KeptAnswerer = (*script)(nil)

// AnswererImage implements gate.KeptAnswerer: each entry's uses so far.
func (s *script) AnswererImage() []int { return slices.Clone(s.used) }

// RestoreAnswerer implements gate.KeptAnswerer.
func (s *script) RestoreAnswerer(img []int) error {
	if len(img) != len(s.entries) {
		return fmt.Errorf("scripted answers: %d uses for %d [[interactions]] entries", len(img), len(s.entries))
	}
	copy(s.used, img)
	return nil
}

// Answerer returns the scenario's scripted answerer: its [[interactions]], consulted in file order,
// each entry with its own count of uses. Every run needs a fresh one, since the counts are per run.
func (sc *Scenario) Answerer() gate.Answerer { return newScript(sc.Interactions) }

func newScript(entries []Interaction) *script {
	return &script{entries: entries, used: make([]int, len(entries))}
}

// Answer implements gate.Answerer.
func (s *script) Answer(req *gate.PromptRequest) (string, uint64, bool) {
	for i := range s.entries {
		in := &s.entries[i]
		if in.Times > 0 && s.used[i] >= in.Times {
			continue
		}
		if !in.matches(req) {
			continue
		}
		s.used[i]++
		if in.Reply != "" {
			return in.Reply, in.Delay, true
		}
		return in.Approve, in.Delay, true
	}
	return "", 0, false
}

// ClassifierRule is one rule of a scenario's scripted auto-mode classifier.
type ClassifierRule struct {
	Agent, Tool, Key string
	Decision         tools.ClassifierDecision
	Reason           string
}

// classifier is the scripted auto-mode classifier: the first rule that matches decides; when
// none does, it escalates (ask).
type classifier struct{ rules []ClassifierRule }

var _ tools.AutoClassifier = (*classifier)(nil)

// Classify implements tools.AutoClassifier.
func (c *classifier) Classify(_ context.Context, req tools.ClassifyRequest) (tools.ClassifierVerdict, error) {
	for _, r := range c.rules {
		if !glob(r.Agent, req.Agent.Name) || !glob(r.Tool, req.Tool) {
			continue
		}
		if r.Key != "" && r.Key != "*" && !anyGlob(r.Key, req.Keys) {
			continue
		}
		return tools.ClassifierVerdict{Decision: r.Decision, Reason: r.Reason}, nil
	}
	return tools.ClassifierVerdict{Decision: tools.ClassifyAsk, Reason: "no classifier rule matches"}, nil
}

func anyGlob(pattern string, names []string) bool {
	for _, n := range names {
		if glob(pattern, n) {
			return true
		}
	}
	return false
}

// compileInteractions validates [[interactions]].
func (c *compiler) compileInteractions() {
	for i, fi := range c.file.Interactions {
		at := tomlfile.JoinIndex("interactions", i)
		in := Interaction{Where: c.where(at), Agent: fi.Agent, Tool: fi.Tool, Key: fi.Key, Approve: fi.Approve, Reply: fi.Reply, Delay: 1}
		c.patterns(at, fi.Agent, fi.Tool, fi.Key)
		switch {
		case fi.Approve == "" && fi.Reply == "":
			c.errorf(at, "give approve (deny, once, stage or run) for approval prompts, or reply for ask_user questions")
		case fi.Approve != "" && fi.Reply != "":
			c.errorf(at, "give approve or reply, not both")
		case fi.Approve != "" && fi.Approve != "deny":
			if _, err := policy.ParseScope(fi.Approve); err != nil {
				c.errorf(tomlfile.JoinKey(at, "approve"), "%w (or deny)", err)
			}
		}
		if fi.Delay != nil {
			if *fi.Delay < 1 || *fi.Delay > 1_000_000 {
				c.errorf(tomlfile.JoinKey(at, "delay"), "%d: an answer arrives 1 to 1000000 ticks after the prompt", *fi.Delay)
			} else {
				in.Delay = uint64(*fi.Delay)
			}
		}
		if fi.Times < 0 {
			c.errorf(tomlfile.JoinKey(at, "times"), "%d: times is 0 (no limit) or more", fi.Times)
		}
		in.Times = int(fi.Times)
		c.sc.Interactions = append(c.sc.Interactions, in)
	}
	for i, fr := range c.file.Classifier {
		at := tomlfile.JoinIndex("classifier", i)
		c.patterns(at, fr.Agent, fr.Tool, fr.Key)
		rule := ClassifierRule{Agent: fr.Agent, Tool: fr.Tool, Key: fr.Key, Reason: fr.Reason}
		switch fr.Decision {
		case "allow":
			rule.Decision = tools.ClassifyAllow
		case "deny":
			rule.Decision = tools.ClassifyDeny
		case "escalate", "ask":
			rule.Decision = tools.ClassifyAsk
		default:
			c.errorf(tomlfile.JoinKey(at, "decision"), "%q: valid decisions: allow, deny, escalate", fr.Decision)
		}
		if rule.Reason == "" {
			rule.Reason = fmt.Sprintf("scripted classifier rule %d", i+1)
		}
		c.sc.Classifier = append(c.sc.Classifier, rule)
	}
}

// patterns checks the agent, tool and key glob patterns of the entry at path.
func (c *compiler) patterns(at, agent, tool, key string) {
	for _, f := range [...]struct{ name, pattern string }{{"agent", agent}, {"tool", tool}, {"key", key}} {
		if _, err := path.Match(f.pattern, ""); err != nil {
			c.errorf(tomlfile.JoinKey(at, f.name), "bad pattern %q: %v (patterns use *, ? and [...])", f.pattern, err)
		}
	}
}
