const config = loadConfig();
function loadConfig() {
  throw new Error("no config at load time");
}
defineTool({ name: "throws", description: "d", parameters: { type: "object" }, run() {} });
