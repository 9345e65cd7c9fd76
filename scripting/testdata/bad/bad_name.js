// Tool names are lower case.
defineTool({
  name: "Word-Count",
  description: "d",
  parameters: { type: "object" },
  run() {},
});
