// grade: the reviewer's rubric. It reads a draft and returns a verdict the stage graph acts on:
// approve when every required section is there and the draft is long enough, else revise with
// what is missing.
const REQUIRED = ["## Method", "## Results", "## Limits"];
const MIN_WORDS = 20;

defineTool({
  name: "grade",
  description: "Grades a draft against the rubric. Returns {verdict: 'approve'|'revise', missing: [sections], words}.",
  parameters: {
    type: "object",
    properties: { path: { type: "string", minLength: 1, description: "The draft, relative to your workdir." } },
    required: ["path"],
    additionalProperties: false
  },
  run: function (args, host) {
    const text = host.readFile(args.path);
    const missing = REQUIRED.filter(function (s) { return text.indexOf(s) < 0; });
    const words = text.split(/\s+/).filter(Boolean).length;
    if (words < MIN_WORDS) {
      missing.push("at least " + MIN_WORDS + " words");
    }
    return { verdict: missing.length === 0 ? "approve" : "revise", missing: missing, words: words };
  }
});
