defineTool({
  name: "broken",
  description: "Has a syntax error.",
  parameters: { type: "object" },
  run: function () { return 1 +; }
});
