package components

import "github.com/warrenhq/warren/models"

// Conversation is an agent's message history, bounded so that a long-running agent cannot grow
// without limit. When full, the oldest messages after the first (the task) are dropped, and a
// tool message left without the assistant turn that asked for it is dropped with it.
type Conversation struct {
	Messages []models.Message
	// Max bounds len(Messages) (the blueprint's max_messages).
	Max int32
	// Dropped counts messages dropped to stay within Max.
	Dropped int32
}

// Append adds m, dropping the oldest messages first if the conversation is full.
func (c *Conversation) Append(m models.Message) {
	if c.Max > 1 && int32(len(c.Messages)) >= c.Max {
		drop := 1
		for 1+drop < len(c.Messages) && c.Messages[1+drop].Role == models.RoleTool {
			drop++
		}
		n := copy(c.Messages[1:], c.Messages[1+drop:])
		for i := 1 + n; i < len(c.Messages); i++ {
			c.Messages[i] = models.Message{}
		}
		c.Messages = c.Messages[:1+n]
		c.Dropped += int32(drop)
	}
	c.Messages = append(c.Messages, m)
}

// LastAssistantText returns the text of the most recent assistant message (the agent's output).
func (c *Conversation) LastAssistantText() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == models.RoleAssistant && c.Messages[i].Content != "" {
			return c.Messages[i].Content
		}
	}
	return ""
}
