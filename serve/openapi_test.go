package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIStatesTheRoutes: api/openapi.json states exactly the routes the handler serves
// (Routes and MetricsRoute), method for method, and every $ref it makes resolves.
func TestOpenAPIStatesTheRoutes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "api", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas   map[string]json.RawMessage `json:"schemas"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	var stated []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			stated = append(stated, strings.ToUpper(method)+" "+path)
		}
	}
	served := append(slices.Clone(Routes), MetricsRoute)
	slices.Sort(stated)
	slices.Sort(served)
	if !slices.Equal(stated, served) {
		t.Errorf("api/openapi.json states\n  %s\nthe handler serves\n  %s", strings.Join(stated, "\n  "), strings.Join(served, "\n  "))
	}
	for _, ref := range refs(raw) {
		name, ok := strings.CutPrefix(ref, "#/components/schemas/")
		if ok && doc.Components.Schemas[name] != nil {
			continue
		}
		if name, ok := strings.CutPrefix(ref, "#/components/responses/"); ok && doc.Components.Responses[name] != nil {
			continue
		}
		t.Errorf("$ref %q resolves to nothing", ref)
	}
}

// refs lists every $ref in a JSON document.
func refs(raw []byte) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	walk(v)
	return out
}

// TestAPIDocListsTheRoutes: docs/api.md's route table has one row for each route the handler
// serves, and none for a route it does not.
func TestAPIDocListsTheRoutes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(raw), "\n") {
		route, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue
		}
		route, _, _ = strings.Cut(route, "`")
		method, _, _ := strings.Cut(route, " ")
		if method != "GET" && method != "POST" {
			continue
		}
		route, _, _ = strings.Cut(route, "?")
		listed = append(listed, route)
	}
	served := append(slices.Clone(Routes), MetricsRoute)
	slices.Sort(listed)
	slices.Sort(served)
	if !slices.Equal(listed, served) {
		t.Errorf("docs/api.md lists\n  %s\nthe handler serves\n  %s", strings.Join(listed, "\n  "), strings.Join(served, "\n  "))
	}
}

// TestOpenAPIStatesTheRefusals: every operation of api/openapi.json states the answers every
// route can give before it is reached: 401 (no token) and 403 (another Host or Origin, or a
// policy refusal), as guard and api make them.
func TestOpenAPIStatesTheRefusals(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "api", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		for method, rawOp := range ops {
			if method == "parameters" {
				continue
			}
			var op struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(rawOp, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			for _, code := range []string{"401", "403"} {
				if op.Responses[code] == nil {
					t.Errorf("%s %s states no %s", strings.ToUpper(method), path, code)
				}
			}
		}
	}
}
