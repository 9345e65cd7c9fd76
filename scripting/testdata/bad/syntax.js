defineTool({
  name: "broken",
  description: "Misses a closing brace.",
  parameters: { type: "object" },
  run: function (args) {
    return args.x +;
  },
});
