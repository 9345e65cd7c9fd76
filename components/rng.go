package components

import "math/rand/v2"

// RNG is the agent's seeded random source (see ecs.AgentRNG), stored by value: two words, no
// pointers.
type RNG struct{ Source rand.PCG }
