package inference

import "github.com/warrenhq/warren/models"

// perMessage is what one message adds beyond its text: the role and separator tokens a provider's
// chat template wraps it in (three to four tokens for the providers Warren speaks), rounded up.
const perMessage = 8

// PromptBytes bounds from above the prompt tokens of a turn with v: the bytes of its system
// prompts, messages, tool calls and tool specs, plus perMessage per message. No token of a
// byte-level BPE tokenizer (the kind OpenAI's and Anthropic's models use) is shorter than one
// byte, so a request never has more tokens than this. It reads lengths only: no request is
// encoded for it.
func PromptBytes(v *models.View, system string) int64 {
	n := int64(len(system)+len(v.System)) + perMessage
	for i := range v.Messages {
		n += MessageBytes(&v.Messages[i])
	}
	for _, t := range v.Tools {
		n += int64(len(t.Name)+len(t.Description)+len(t.Parameters)) + perMessage
	}
	return n
}

// MessageBytes is what one message adds to PromptBytes: what a cut that drops it takes away.
func MessageBytes(m *models.Message) int64 {
	n := int64(len(m.Content)+len(m.CallID)) + perMessage
	for _, c := range m.Calls {
		n += int64(len(c.ID)+len(c.Name)+len(c.Args)) + perMessage
	}
	return n
}

// Context is what an agent's last answered live turn said about its conversation: the tokens the
// provider counted (prompt and completion) and the PromptBytes of that turn's request.
type Context struct {
	Tokens, Bytes int64
}

// Prompt estimates the prompt tokens of a turn whose request measures bytes (PromptBytes), given
// what the agent's last answered turn said. On a first turn it is the byte bound. After one, it is
// the tokens the provider counted then, plus the bytes added since: still an upper bound while the
// conversation only grows, and a tight one, since the part the provider counted is exact. (When a
// conversation was cut it only overestimates.)
func (c Context) Prompt(bytes int64) int64 {
	if c.Tokens == 0 {
		return bytes
	}
	return c.Tokens + max(bytes-c.Bytes, 0)
}

// Estimate is the most tokens a turn may use: its prompt's estimate and the completion cap
// (models.LiveSpec.MaxTokens). A budget or a tokens-per-minute limit is checked against it before
// the turn is sent, so none is overrun after.
func Estimate(prompt, maxTokens int64) int64 { return prompt + maxTokens }
