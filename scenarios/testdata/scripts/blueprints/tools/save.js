defineTool({
  name: "save",
  description: "Saves text to a file through the write_file host function.",
  parameters: { type: "object", properties: { path: { type: "string" }, text: { type: "string" } }, required: ["path", "text"] },
  run: function (args, host) {
    try {
      return host.writeFile(args.path, args.text);
    } catch (e) {
      return "refused: " + e.message;
    }
  }
});
