// shout: a host-wide script tool (from the host config's tools_dir), not any blueprint's.
defineTool({
  name: "shout",
  description: "Returns the text in capitals.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  run(args) {
    return args.text.toUpperCase() + "!";
  },
});
