const def = { name: "twice", description: "d", parameters: { type: "object" }, run() { return 1; } };
defineTool(def);
  defineTool(def);
