package models

import (
	"encoding/json"
	"sync"
)

// SchemaCache keeps the decoded form of tool schemas, so that a live back end turning a stage's
// tools into its provider's request decodes each schema once, not on every turn. A stage's tool
// specs are the same bytes turn after turn; the decoded value is shared by every request and must
// be treated as read-only (the SDKs only encode it). Safe for concurrent use; the zero value is
// ready.
type SchemaCache struct {
	mu   sync.RWMutex
	byJS map[string]map[string]any
}

// Decode returns the JSON object raw holds (nil for an empty schema), decoding it on first use.
func (c *SchemaCache) Decode(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	c.mu.RLock()
	v, ok := c.byJS[string(raw)]
	c.mu.RUnlock()
	if ok {
		return v, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.byJS == nil {
		c.byJS = map[string]map[string]any{}
	}
	c.byJS[string(raw)] = schema
	c.mu.Unlock()
	return schema, nil
}
