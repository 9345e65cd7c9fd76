package components

import "github.com/warrenhq/warren/models"

// Conversation is an agent's message history, bounded so that a long-running agent cannot grow
// without limit. Messages are dropped oldest first, a whole turn at a time: an assistant message
// goes together with the tool results that answer it, so the history never holds a call without
// its result or a result without its call. The first message stays when it is the agent's task
// (a user message). The turn being built is never split: while its results are still arriving
// the history may exceed Max by that turn, and it is trimmed on the next append.
type Conversation struct {
	Messages []models.Message
	// Max bounds len(Messages) (the blueprint's max_messages); 0 means unbounded.
	Max int32
	// Dropped counts messages dropped to stay within Max.
	Dropped int32
	// lastUser is the content of the latest non-empty user message appended, kept even when
	// the message itself is dropped (see LastUserText).
	lastUser string
}

// Append adds m, then drops the oldest whole turns while the conversation is over Max.
func (c *Conversation) Append(m models.Message) {
	c.Messages = append(c.Messages, m)
	if m.Role == models.RoleUser && m.Content != "" {
		c.lastUser = m.Content
	}
	if c.Max <= 0 {
		return
	}
	for int32(len(c.Messages)) > c.Max {
		start := 0
		if c.Messages[0].Role == models.RoleUser {
			start = 1 // the task stays
		}
		if m := &c.Messages[start]; m.Role == models.RoleAssistant && start+1+len(m.Calls) >= len(c.Messages) {
			// The oldest droppable turn is the one being built: checked from its call count,
			// so appending each of a big turn's results stays O(1).
			return
		}
		end := start + 1
		for end < len(c.Messages) && c.Messages[end].Role == models.RoleTool {
			end++
		}
		if end >= len(c.Messages) {
			return // the oldest droppable turn is the one being built
		}
		n := copy(c.Messages[start:], c.Messages[end:])
		clear(c.Messages[start+n:])
		c.Messages = c.Messages[:start+n]
		c.Dropped += int32(end - start)
	}
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

// LastUserText returns the content of the latest user message appended (the task, a person's
// answer, a message from another agent or the host): the turn's stated intent, "" when there is
// none. It is kept when a full conversation drops that message, since what was asked still
// stands, and costs nothing per call (every tool call's ExecContext carries it).
func (c *Conversation) LastUserText() string { return c.lastUser }
