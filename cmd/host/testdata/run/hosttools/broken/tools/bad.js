defineTool({ name: "bad", description: "d", parameters: { type: "object" },
  run(args) { return args. ; } });
