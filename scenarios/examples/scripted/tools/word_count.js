// word_count: counts the words and lines of a file in the agent's workdir.
defineTool({
  name: "word_count",
  description: "Counts the words and lines of a text file in your workdir. Returns {path, words, lines}.",
  parameters: {
    type: "object",
    properties: { path: { type: "string", minLength: 1, description: "The file, relative to your workdir." } },
    required: ["path"],
    additionalProperties: false
  },
  run: function (args, host) {
    const text = host.readFile(args.path);
    const words = text.split(/\s+/).filter(Boolean).length;
    const lines = text.split("\n").filter(Boolean).length;
    host.log("counted " + words + " words in " + args.path);
    return { path: args.path, words: words, lines: lines };
  }
});
