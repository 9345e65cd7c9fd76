package blueprint

import (
	"fmt"
	"path/filepath"
	"sync"
)

// Cache compiles each blueprint file once and hands the same *Blueprint to
// every caller, so that all agents and groups naming a file share one
// compiled value. It is safe for concurrent use; concurrent first loads of
// one file wait for a single compile, while different files load in
// parallel. A failed load is remembered too: every agent naming a broken
// blueprint gets the same error, and the file is read once per run.
type Cache struct {
	tools   *toolSet
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

// cacheEntry is one file's compile, done at most once.
type cacheEntry struct {
	once sync.Once
	bp   *Blueprint
	err  error
}

// NewCache returns an empty Cache that validates blueprints against
// knownTools, the tool names the host offers.
func NewCache(knownTools []string) *Cache {
	return &Cache{tools: newToolSet(knownTools), entries: make(map[string]*cacheEntry)}
}

// Load returns the compiled blueprint at path, compiling it on first use.
// Paths are keyed by their clean absolute form, so "bp/w.toml" and
// "./bp/../bp/w.toml" are one entry, and the blueprint's Path (and every
// error) names the absolute path.
func (c *Cache) Load(path string) (*Blueprint, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("blueprint: resolving %s: %w", path, err)
	}
	c.mu.Lock()
	e, ok := c.entries[abs]
	if !ok {
		e = &cacheEntry{}
		c.entries[abs] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.bp, e.err = load(abs, c.tools) })
	return e.bp, e.err
}
