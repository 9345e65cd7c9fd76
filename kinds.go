package warren

import (
	"github.com/warrenhq/warren/models"
	// The live back ends register their kinds as they load: the host links them here.
	_ "github.com/warrenhq/warren/models/anthropic"
	_ "github.com/warrenhq/warren/models/openai"
)

// ModelKind is one registered model kind, as a scenario names it (`kind = "scripted"`) and
// as help texts describe it.
type ModelKind struct {
	// Name is what a scenario's [models.<key>] kind names; Summary says what its models do.
	Name, Summary string
}

// ModelKinds lists the model kinds this host has registered (models.Kinds), sorted by id, so a
// help text or a validator lists exactly what a scenario may name.
func ModelKinds() []ModelKind {
	ids := models.Kinds()
	out := make([]ModelKind, 0, len(ids))
	for _, id := range ids {
		if k, ok := models.LookupKind(id); ok {
			out = append(out, ModelKind{Name: k.Name(), Summary: k.Summary})
		}
	}
	return out
}
