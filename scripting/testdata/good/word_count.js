// Counts the words of a file in the agent's workdir (the example of issue 5).
defineTool({
  name: "word_count", // [a-z][a-z0-9_]*, unique among all tools
  description: "Counts the words of a file in the workdir.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  run: function (args, host) {
    const text = host.readFile(args.path);
    host.log("counting " + args.path);
    return { words: text.split(/\s+/).filter(Boolean).length };
  },
});
