package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/operator"
)

// askOnTerminal asks the person at the terminal each prompt the run's console holds, one at a
// time in the order they opened, until ctx ends or the run does: host run --interactive. An
// answer the prompt does not take is refused with what would be valid, and asked again.
func askOnTerminal(ctx context.Context, console *warren.Console, in io.Reader, out io.Writer) {
	lines := bufio.NewReader(in)
	asked := map[[2]string]bool{}
	for {
		changed := console.Changed()
		var next *operator.Prompt
		for _, p := range console.Prompts() {
			if !asked[[2]string{p.Agent, p.CallID}] {
				next = &p
				break
			}
		}
		if next == nil {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return
			}
		}
		fmt.Fprintf(out, "\n%s asks (%s, tick %d): %s\n> ", next.Agent, next.Tool, next.Tick, promptLine(*next))
		line, err := lines.ReadString('\n')
		if err != nil && line == "" {
			return // no more input: the prompts wait for their timeout, or the run's end
		}
		switch err := console.Answer(next.Agent, next.CallID, strings.TrimSpace(line), "terminal"); {
		case err == nil:
			asked[[2]string{next.Agent, next.CallID}] = true
		case operatorGone(err):
			asked[[2]string{next.Agent, next.CallID}] = true
			fmt.Fprintf(out, "(%v)\n", err)
		default:
			fmt.Fprintf(out, "%v\n", err)
		}
	}
}

// operatorGone reports an error after which the prompt cannot be asked again.
func operatorGone(err error) bool {
	return err != nil && (strings.Contains(err.Error(), operator.ErrNoPrompt.Error()) || strings.Contains(err.Error(), operator.ErrEnded.Error()))
}
