defineTool({
  name: "peek",
  description: "Reads an environment variable the host allows, and one it does not.",
  parameters: { type: "object", properties: {} },
  run: function (args, host) {
    let hidden;
    try { hidden = host.env("WARREN_TEST_HIDDEN"); } catch (e) { hidden = "refused"; }
    return host.env("WARREN_TEST_SHOWN") + " / " + hidden;
  }
});
