// note_todo: a script calling another tool; the call passes the full permission gate.
defineTool({
  name: "note_todo",
  description: "Adds an item to your checklist, prefixed with a tag.",
  parameters: {
    type: "object",
    properties: { tag: { type: "string" }, text: { type: "string", minLength: 1 } },
    required: ["text"],
    additionalProperties: false
  },
  run: function (args, host) {
    const text = (args.tag ? "[" + args.tag + "] " : "") + args.text;
    return host.callTool("todo_add", { text: text });
  }
});
