package components

import "github.com/warrenhq/warren/models"

// Spend is what live model turns cost: the tokens providers reported and their price. An agent
// keeps its own in AgentData; the run, each group and each agent tree keep theirs in the host's
// inference resource.
type Spend struct {
	// Tokens are the tokens the providers reported.
	Tokens models.Usage
	// Cost is their price in picodollars (inference.Cost), from the prices of the pools that sent
	// them.
	Cost int64
	// Turns counts answered live turns; Attempts every attempt sent, retries included.
	Turns, Attempts uint32
}

// Add adds o to s.
func (s *Spend) Add(o Spend) {
	s.Tokens.Add(o.Tokens)
	s.Cost += o.Cost
	s.Turns += o.Turns
	s.Attempts += o.Attempts
}
