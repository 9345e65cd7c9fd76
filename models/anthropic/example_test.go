package anthropic_test

import (
	"context"
	"fmt"

	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/models/anthropic"
)

// An anthropic model asked one turn, here of the fake provider on loopback (a local server
// needs no key, so api_key_env names an unset variable). The usage is normalised: the prompt
// counts the tokens read from the cache too. The provider saw cache breakpoints on the system
// prompt and on the conversation's last block.
func Example() {
	srv, err := fakellm.Start(func(int, fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "Two files.", Usage: fakellm.Usage{Prompt: 1200, Completion: 4, Cached: 1100}}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	cfg := anthropic.Config{Model: "claude-fake", BaseURL: srv.AnthropicURL, APIKeyEnv: "WARREN_EXAMPLE_NO_KEY", SystemPrompt: "You count files."}
	m, err := cfg.Compile(&models.KindEnv{Key: "counter", ID: "anthropic:counter"})
	if err != nil {
		fmt.Println(err)
		return
	}
	reply, err := m.Turn(context.Background(), &models.State{}, &models.View{Messages: []models.Message{
		{Role: models.RoleUser, Content: "How many files are there?"},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Text)
	fmt.Printf("prompt %d (%d read from the cache), completion %d\n", reply.Usage.Prompt, reply.Usage.CacheRead, reply.Usage.Completion)
	fmt.Println(srv.Requests()[0].CacheMarks)
	// Output:
	// Two files.
	// prompt 1200 (1100 read from the cache), completion 4
	// [system[0] messages[0].content[0]]
}
