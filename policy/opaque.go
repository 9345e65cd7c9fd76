package policy

// The resolver's side of opaque keys (see Opacity): a call carries which of its keys are opaque,
// and the resolver floors each of them while a shell key is denied.

// ShellCall is the Call of a shell line in stage: its analysis's keys, opacity and whether it
// was analysed.
func ShellCall(stage int, line ShellLine) Call {
	return Call{Stage: stage, Tool: ShellTool, Keys: line.Keys, Parsed: line.Why == "", Opaque: line.Opaque}
}

// opacity returns why key is opaque in c, "" when it is not.
func (c *Call) opacity(key string) string {
	for i := range c.Opaque {
		if c.Opaque[i].Key == key {
			return c.Opaque[i].Why
		}
	}
	return ""
}

// opaqueFloor is the decision on an opaque key (why says what it runs unseen): its own
// decision, unless some layer denies a shell key. The key cannot be shown to avoid the denied
// program, so it is then denied too, as an unanalysable line is, unless a permission names the
// key or its program: the host ceiling or a launch flag, or, when only blueprints deny shell
// keys, the blueprint too. Naming it says the user decides it, knowingly.
func (r *Resolver) opaqueFloor(e keyEval, why string, st int) Decision {
	d := e.decision()
	rule := &r.unparsedRules[st]
	if d.Verdict == Deny || (rule.deny == nil && rule.denyFlag == nil) || r.namesOpaque(e, rule.userDeny) {
		return d
	}
	var denied string
	if rule.deny != nil {
		denied = rule.deny.says
	} else {
		denied = "launch flag --deny " + rule.denyFlag.name
	}
	return Decision{Verdict: Deny, Layer: LayerOpaque, Key: e.key,
		Reason: OpacityReason(e.key, why) + ", so it cannot be shown to avoid denied programs (" + denied + "); a permission naming " +
			namesOf(e.key) + " in the host config decides it instead"}
}

// namesOf names the permission entries that would name key: the key, or its program.
func namesOf(key string) string {
	if p := programKeyOf(key); p != key {
		return key + " or " + p
	}
	return key
}

// namesOpaque reports whether a layer trusted enough to lift an opaque key's floor names the key
// or its program (not only the tool): the host ceiling or a launch flag, and when the only denies
// come from blueprints, the blueprint too.
func (r *Resolver) namesOpaque(e keyEval, userDeny bool) bool {
	named := func(name string) bool { return name != ShellTool }
	switch {
	case e.ceiling != nil && named(e.ceiling.name):
		return true
	case e.flag != nil && named(e.flag.name):
		return true
	case !userDeny && e.blueprint != nil && named(e.blueprint.name):
		return true
	}
	return false
}

// programKeyOf is the program key of a shell key ("shell:git" for "shell:git push"), the key
// itself for a program key.
func programKeyOf(key string) string {
	if p := KeyProgram(key); p != "" {
		return ProgramKey(p, "")
	}
	return key
}
